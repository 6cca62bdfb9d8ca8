// The TrustEvaluator product, as it has always been imported: the engine (TrustEvaluatorCore) and
// the file formats over it (TrustEvaluatorFormats: other tools' pinning files, lint, signed pin-set
// updates). A package that needs only evaluation depends on the TrustEvaluatorCore product.
@_exported import TrustEvaluatorCore
@_exported import TrustEvaluatorFormats
