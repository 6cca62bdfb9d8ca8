// A pin set without pins: a host without pins has no pin set (issue 42).
// error: type 'PinSet.Pins' has no member 'none'
import TrustEvaluator

let set = PinSet(.none)
