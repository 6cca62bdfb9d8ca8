// libFuzzer target: FuzzTargets.transparency. Empty unless built by scripts/fuzz.sh (-DFUZZING).
#if FUZZING
import PincheckFuzzing
@_cdecl("FuzzTransparency_main")
public func fuzzMain(_ argc: CInt, _ argv: FuzzArguments) -> CInt { runFuzzer(argc, argv, target: FuzzTargets.transparency) }
#endif
