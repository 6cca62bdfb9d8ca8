// libFuzzer target: FuzzTargets.transparency. Empty unless built by scripts/fuzz.sh (-DFUZZING).
#if FUZZING
import PincheckFuzzing

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTargets.transparency(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}

@_cdecl("FuzzTransparency_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzOne)
}
#endif
