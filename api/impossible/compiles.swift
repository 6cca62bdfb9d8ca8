// The control: these type-check.
import TrustEvaluator

let pins = try PinnedPublicKeys(parsing: ["sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", "sha256/YLh1dUR9y6Kja30RrAn7JKnbQG/uEtLMkBgFF2Fuihg="])
let set = PinSet(.publicKeys(pins), enforcement: .reportOnly)
let none: PinSet.Pins? = PinSet.Pins(TrustPolicy.Pinning.none)
var policy = TrustPolicy()
policy.validation.nameValidation = .required
let chain: ValidationPolicy.ChainValidation = .required
