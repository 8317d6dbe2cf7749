/* The App side of the MCP Apps bridge (io.modelcontextprotocol/ui, protocol 2026-01-26) that
 * every Neemias view speaks to its host: JSON-RPC 2.0 over postMessage to window.parent.
 *
 * Why hand-written: the official App class of @modelcontextprotocol/ext-apps 2.0.4 needs the MCP
 * client SDK and zod; bundled and minified without zod's locales it is 340 KB, more than twice
 * the 150 KB a view document may weigh (docs/views.md has the figures). This file is the subset
 * of that class the views use, with the same names and the same messages on the wire:
 *   new NeemiasApp(appInfo, appCapabilities, {autoResize})
 *   app.connect()            ui/initialize, then ui/notifications/initialized; resolves with the
 *                            host's result; rejects (and stops listening) when the host refuses
 *   app.getHostContext()     the hostContext of ui/initialize, updated by host-context-changed
 *   app.getHostCapabilities(), app.getHostVersion()
 *   app.callServerTool(p)    tools/call through the host; a JSON-RPC error rejects with an Error
 *                            carrying .code and .data; a result with isError resolves
 *   app.readServerResource(p) resources/read through the host
 *   app.ontoolinput, ontoolinputpartial, ontoolresult, ontoolcancelled, onhostcontextchanged,
 *   onteardown               the host's notifications and ui/resource-teardown
 *   NeemiasApp.applyDocumentTheme(theme), NeemiasApp.applyHostStyleVariables(vars)
 * It answers ping and ui/resource-teardown, refuses any other request from the host with
 * -32601, ignores messages that are not JSON-RPC 2.0 or not from window.parent, and with
 * autoResize sends ui/notifications/size-changed as the document's size changes.
 * TestBrowserViews runs it against the official host side (AppBridge), which validates every
 * message against the extension's schemas. */
(function () {
  "use strict";
  var PROTOCOL = "2026-01-26", TIMEOUT_MS = 60000;

  function NeemiasApp(appInfo, appCapabilities, options) {
    this._appInfo = appInfo;
    this._appCapabilities = appCapabilities || {};
    this._options = options || { autoResize: true };
    this._nextId = 0;
    this._pending = {};
    this._host = null; // the ui/initialize result
    this._listener = null;
    this.ontoolinput = this.ontoolinputpartial = this.ontoolresult = this.ontoolcancelled = null;
    this.onhostcontextchanged = this.onteardown = null;
  }

  NeemiasApp.prototype._post = function (msg) { window.parent.postMessage(msg, "*"); };

  // request sends a JSON-RPC request to the host; the promise settles with its answer, or
  // rejects after TIMEOUT_MS (the official SDK's default request timeout).
  NeemiasApp.prototype.request = function (method, params) {
    var self = this, id = this._nextId++;
    return new Promise(function (resolve, reject) {
      var timer = setTimeout(function () {
        delete self._pending[id];
        reject(new Error("MCP Apps: the host did not answer " + method + " within " + TIMEOUT_MS / 1000 + " s"));
      }, TIMEOUT_MS);
      self._pending[id] = { resolve: resolve, reject: reject, timer: timer };
      self._post({ jsonrpc: "2.0", id: id, method: method, params: params === undefined ? {} : params });
    });
  };

  NeemiasApp.prototype.notification = function (method, params) {
    var m = { jsonrpc: "2.0", method: method };
    if (params !== undefined) m.params = params;
    this._post(m);
    return Promise.resolve();
  };

  NeemiasApp.prototype._receive = function (ev) {
    var m = ev.data;
    if (ev.source !== window.parent || !m || typeof m !== "object" || m.jsonrpc !== "2.0") return;
    if (m.method === undefined) { // a response to one of our requests
      var p = this._pending[m.id];
      if (!p) return;
      delete this._pending[m.id];
      clearTimeout(p.timer);
      if (m.error) {
        var e = new Error(String(m.error.message || "MCP Apps: the host refused the request"));
        e.code = m.error.code;
        e.data = m.error.data;
        p.reject(e);
      } else {
        p.resolve(m.result);
      }
      return;
    }
    if (m.id !== undefined && m.id !== null) { this._answer(m); return; }
    this._notified(m.method, m.params || {});
  };

  // _answer handles a request from the host: ping, ui/resource-teardown; nothing else.
  NeemiasApp.prototype._answer = function (m) {
    var self = this, work;
    if (m.method === "ping") {
      work = Promise.resolve({});
    } else if (m.method === "ui/resource-teardown") {
      work = Promise.resolve(this.onteardown ? this.onteardown(m.params || {}) : {}).then(function (r) { return r || {}; });
    } else {
      this._post({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found: " + m.method } });
      return;
    }
    work.then(function (result) { self._post({ jsonrpc: "2.0", id: m.id, result: result }); },
      function (err) { self._post({ jsonrpc: "2.0", id: m.id, error: { code: -32603, message: String(err && err.message || err) } }); });
  };

  var HANDLERS = {
    "ui/notifications/tool-input": "ontoolinput",
    "ui/notifications/tool-input-partial": "ontoolinputpartial",
    "ui/notifications/tool-result": "ontoolresult",
    "ui/notifications/tool-cancelled": "ontoolcancelled",
    "ui/notifications/host-context-changed": "onhostcontextchanged"
  };

  NeemiasApp.prototype._notified = function (method, params) {
    if (method === "ui/notifications/host-context-changed" && this._host) {
      this._host.hostContext = Object.assign({}, this._host.hostContext, params); // it carries only what changed
    }
    var h = HANDLERS[method] && this[HANDLERS[method]];
    if (typeof h === "function") h.call(this, params);
  };

  NeemiasApp.prototype.connect = function () {
    var self = this;
    if (this._listener) return Promise.reject(new Error("MCP Apps: already connected"));
    this._listener = function (ev) { self._receive(ev); };
    window.addEventListener("message", this._listener);
    return this.request("ui/initialize", { appInfo: this._appInfo, appCapabilities: this._appCapabilities, protocolVersion: PROTOCOL })
      .then(function (res) {
        if (!res || typeof res !== "object") throw new Error("MCP Apps: the host's ui/initialize result is empty");
        self._host = res;
        return self.notification("ui/notifications/initialized");
      })
      .then(function () {
        if (self._options.autoResize) self._watchSize();
        return self._host;
      }, function (err) {
        window.removeEventListener("message", self._listener);
        self._listener = null;
        throw err;
      });
  };

  // _watchSize tells the host the document's width and natural height whenever either changes,
  // once per animation frame at most (as the official class measures it).
  NeemiasApp.prototype._watchSize = function () {
    var self = this, queued = false, lastW = 0, lastH = 0;
    function measure() {
      if (queued) return;
      queued = true;
      requestAnimationFrame(function () {
        queued = false;
        var root = document.documentElement, was = root.style.height;
        root.style.height = "max-content";
        var h = Math.ceil(root.getBoundingClientRect().height);
        root.style.height = was;
        var w = Math.ceil(window.innerWidth);
        if (w !== lastW || h !== lastH) {
          lastW = w; lastH = h;
          self.notification("ui/notifications/size-changed", { width: w, height: h });
        }
      });
    }
    measure();
    var ro = new ResizeObserver(measure);
    ro.observe(document.documentElement);
    ro.observe(document.body);
  };

  NeemiasApp.prototype._connected = function (what) {
    if (!this._host) throw new Error("MCP Apps: " + what + " before connect() finished");
  };
  NeemiasApp.prototype.getHostContext = function () { return this._host ? this._host.hostContext : undefined; };
  NeemiasApp.prototype.getHostCapabilities = function () { return this._host ? this._host.hostCapabilities : undefined; };
  NeemiasApp.prototype.getHostVersion = function () { return this._host ? this._host.hostInfo : undefined; };
  NeemiasApp.prototype.callServerTool = function (params) {
    this._connected("callServerTool");
    if (typeof params === "string") throw new Error("callServerTool takes {name, arguments}, not a string");
    return this.request("tools/call", params);
  };
  NeemiasApp.prototype.readServerResource = function (params) {
    this._connected("readServerResource");
    return this.request("resources/read", params);
  };

  // The host's theme ("light" or "dark") on the document: data-theme and color-scheme.
  NeemiasApp.applyDocumentTheme = function (theme) {
    var root = document.documentElement;
    root.setAttribute("data-theme", theme);
    root.style.colorScheme = theme;
  };
  // The host's CSS variables (hostContext.styles.variables) on the document's root.
  NeemiasApp.applyHostStyleVariables = function (vars, el) {
    var root = el || document.documentElement;
    Object.keys(vars || {}).forEach(function (k) { if (vars[k] !== undefined) root.style.setProperty(k, vars[k]); });
  };

  window.NeemiasApp = NeemiasApp;
})();
