// Package bench is the load generator behind `make bench`: it sets up its own database (the
// demo church, ANALYZEd), starts the real server as a subprocess and a hand-written floor in
// process, drives each target with a closed loop of N clients in alternating rounds, and
// reports throughput, latency percentiles, ratios to the floor and the goals of issue 8.
//
// Only ratios measured side by side in one run mean anything on a shared machine; that is why
// every target runs against the same database in the same process run, and why rounds
// alternate the targets (A B C A B C …) so that drift hits each of them alike.
package bench
