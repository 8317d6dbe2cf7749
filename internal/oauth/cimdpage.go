package oauth

import (
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/neemias/neemias-mcp/internal/oauth/cimd"
)

// metadataRule is what the error page says about a refused Client ID Metadata Document:
// the rule it broke, in Portuguese and English. No text of it comes from the fetched
// document or the network (no body, no resolved address); the log keeps the detail.
func metadataRule(e *cimd.Error) (pt, en string) {
	switch e.Reason {
	case cimd.ReasonNotHTTPS:
		return "o client_id é um endereço sem https; documentos de metadados só são aceitos em https.",
			"the client_id is a URL without https; metadata documents are accepted over https only."
	case cimd.ReasonBadURL:
		return "o client_id não é um endereço aceitável de documento de metadados: é preciso https, um nome de host público, um caminho, e nenhum usuário, consulta, fragmento ou segmento \".\" ou \"..\".",
			"the client_id is not an acceptable metadata document URL: it needs https, a public host name, a path, and no userinfo, query, fragment or \".\" or \"..\" segment."
	case cimd.ReasonAddress:
		return "o host do client_id aponta para um endereço de rede que não é público; o servidor não busca documentos ali.",
			"the client_id's host points to a network address that is not public; the server fetches no documents there."
	case cimd.ReasonUnreachable:
		return "não foi possível obter o documento (nome não encontrado, conexão recusada, certificado TLS não aceito ou tempo esgotado).",
			"the document could not be retrieved (name not found, connection refused, TLS certificate not accepted, or timeout)."
	case cimd.ReasonRedirect:
		return fmt.Sprintf("o endereço respondeu com um redirecionamento (HTTP %d), que não é seguido: publique o documento exatamente no endereço do client_id.", e.Status),
			fmt.Sprintf("the URL answered with a redirect (HTTP %d), which is not followed: publish the document at exactly the client_id URL.", e.Status)
	case cimd.ReasonStatus:
		return fmt.Sprintf("o endereço respondeu HTTP %d em vez de 200.", e.Status),
			fmt.Sprintf("the URL answered HTTP %d instead of 200.", e.Status)
	case cimd.ReasonContentType:
		return "o documento não foi servido como JSON (Content-Type: application/json).",
			"the document was not served as JSON (Content-Type: application/json)."
	case cimd.ReasonTooLarge:
		return "o documento é grande demais (o limite é de 5 KiB).",
			"the document is too large (the limit is 5 KiB)."
	case cimd.ReasonInvalidJSON:
		return "o documento não é um objeto JSON válido (UTF-8, sem membros repetidos, nada depois do objeto).",
			"the document is not one valid JSON object (UTF-8, no repeated members, nothing after the object)."
	case cimd.ReasonClientIDMismatch:
		return "o client_id dentro do documento não é idêntico ao endereço do documento (compare a barra final, a porta e maiúsculas e minúsculas).",
			"the client_id inside the document is not identical to the document's URL (compare the trailing slash, the port and letter case)."
	case cimd.ReasonInvalidMember:
		if e.Member != "" {
			return fmt.Sprintf("o membro %q do documento não segue as regras de um cliente público deste servidor.", e.Member),
				fmt.Sprintf("the document's member %q breaks the rules for a public client of this server.", e.Member)
		}
		return "um membro do documento não segue as regras de um cliente público deste servidor.",
			"a member of the document breaks the rules for a public client of this server."
	case cimd.ReasonRedirectURINotListed:
		return "o redirect_uri do pedido não consta de redirect_uris no documento.",
			"the request's redirect_uri is not listed in the document's redirect_uris."
	}
	return "o documento não pôde ser usado.", "the document could not be used."
}

// metadataErrorPage answers an authorization request whose client's metadata document was
// refused: which client_id, and which rule.
func (a *AS) metadataErrorPage(w http.ResponseWriter, clientID string, e *cimd.Error) {
	pt, en := metadataRule(e)
	if utf8.RuneCountInString(clientID) > 200 {
		clientID = string([]rune(clientID)[:200]) + "…"
	}
	a.render(w, http.StatusBadRequest, "error", errorView{
		Title:  "Aplicativo não reconhecido",
		Pt:     "O documento de metadados do aplicativo (Client ID Metadata Document) foi recusado: " + pt,
		En:     "The application's client metadata document was refused: " + en,
		Code:   clientID,
		Reason: string(e.Reason),
	})
}
