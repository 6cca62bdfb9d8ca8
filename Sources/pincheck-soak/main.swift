// Runs many evaluations and checks that resident memory stays flat after a warm-up.
//   pincheck-soak [ITERATIONS] [MAX_GROWTH_BYTES]     (defaults: 100000, 1 MiB)
// Exit 0 when growth stays under the limit and every kind of input was seen, 1 otherwise.
import Foundation
import PincheckFuzzing

let arguments = CommandLine.arguments
let iterations = arguments.count > 1 ? Int(arguments[1]) ?? 100_000 : 100_000
let limit = arguments.count > 2 ? Int(arguments[2]) ?? 1 << 20 : 1 << 20
let result = Soak.run(iterations: iterations)
let kib = { (bytes: Int) in "\(bytes / 1024) KiB" }
print("\(result.iterations) evaluations: \(result.trusted) trusted, \(result.rejected) rejected, \(result.badInput) bad input")
print(
    "resident memory after warm-up \(kib(result.residentAfterWarmUp)), at the end \(kib(result.residentAtEnd)), growth \(kib(result.growth)) (limit \(kib(limit)))"
)
let flat = result.growth < limit
let varied = result.trusted > 0 && result.rejected > 0 && result.badInput > 0
print(flat && varied ? "memory flat: OK" : "memory check FAILED\(varied ? "" : " (not every kind of input was evaluated)")")
exit(flat && varied ? 0 : 1)
