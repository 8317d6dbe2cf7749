package capability

// AppendTypedText is AppendTextOf's typed path alone, for the external tests that hold it to
// the JSON path over the spec's output types.
var AppendTypedText = appendTypedText
