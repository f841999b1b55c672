// Package iceberggo_test reads tables this library writes with UniForm
// Iceberg on through Apache iceberg-go, an independent Iceberg reader,
// and checks that it returns exactly the rows the Delta reader does, also
// when iceberg-go finds the tables through the library's catalog server
// (its REST catalog client, catalog/rest, against catalog/server). It is
// a module of its own so that iceberg-go and Arrow stay out of the main
// module's dependencies; .ci/run runs its tests.
package iceberggo_test
