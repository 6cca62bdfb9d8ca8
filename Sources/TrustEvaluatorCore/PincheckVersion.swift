/// Pincheck's version, as `pincheck --version` prints it and as `CHANGELOG.md` lists releases.
///
/// From 0.9.0 on, a public declaration is removed or renamed only after a release in which it was
/// `@available(*, deprecated, renamed:)`; `scripts/api-check.sh` (run by `scripts/test.sh`) fails
/// on any other API break against the baseline release named in `api/baseline`.
public enum PincheckVersion {
    /// The version of this build (semantic versioning; before 1.0, a minor version may deprecate).
    public static let current = "0.9.0"
}
