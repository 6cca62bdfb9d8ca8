/// Which root programs' decisions an evaluation applies, with which data.
///
/// Programs distrust roots in two ways Pincheck applies, wherever the path ends at a program's
/// root (from the system store or a file alike): a date after which the root's new certificates
/// are refused (Mozilla: the leaf's notBefore; Chrome: its earliest verified SCT, else its
/// notBefore), and removal (every certificate refused). A PEM bundle cannot say either, so the
/// system store alone trusts what the browsers refuse.
public struct RootProgramPolicy: Sendable {
    /// Whose distrust applies.
    public enum Distrust: Sendable, Hashable {
        /// Refused when any of these programs refuses.
        case programs(Set<RootPrograms.Program>)
        /// Not applied. Named in the verdict: a certificate a program refuses is trusted with a
        /// `chain.root-distrusted` warning that says so.
        case notApplied(because: String)

        /// Mozilla's and Chrome's: refused if either refuses. The default.
        public static let both = Distrust.programs([.mozilla, .chrome])
        /// Mozilla's only.
        public static let mozilla = Distrust.programs([.mozilla])
        /// Chrome's only.
        public static let chrome = Distrust.programs([.chrome])
    }

    /// The programs' data; ``RootPrograms/bundled`` by default.
    public var data: RootPrograms
    /// Whose distrust applies; ``Distrust/both`` by default.
    public var distrust: Distrust

    public init(data: RootPrograms = .bundled, distrust: Distrust = .both) {
        self.data = data
        self.distrust = distrust
    }
}
