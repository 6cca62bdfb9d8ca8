import FoundationEssentials

extension RootPrograms {
    /// The data compiled into Pincheck: generated from Mozilla's `certdata.txt`, the CCADB's
    /// records and Chrome Root Store's constraints by `scripts/generate-root-programs.sh`
    /// (``sources`` names their revisions). Newer files are read over it by TrustEvaluatorFormats:
    /// `RootPrograms(files:over:allowingOlder:)` and `RootPrograms(contentsOf:over:allowingOlder:)`.
    ///
    /// Decoded on first use, not when a policy is made: a lookup of a certificate the data cannot
    /// name (neither its fingerprint nor its key occurs in it: a private root) decodes nothing.
    public static let bundled = RootPrograms(lazilyDecoding: BundledRootPrograms.encoded)

    /// Which files ``bundled`` was generated from (without decoding it): what `pincheck --version` prints.
    public static var bundledProvenance: String { BundledRootPrograms.provenance }

}
