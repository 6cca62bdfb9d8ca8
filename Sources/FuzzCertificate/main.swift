// libFuzzer target: FuzzTargets.certificate. Empty unless built by scripts/fuzz.sh (-DFUZZING).
#if FUZZING
import PincheckFuzzing
@_cdecl("FuzzCertificate_main")
public func fuzzMain(_ argc: CInt, _ argv: FuzzArguments) -> CInt { runFuzzer(argc, argv, target: FuzzTargets.certificate) }
#endif
