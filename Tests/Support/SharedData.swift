import Foundation

/// The third-party test data (x509-limbo, the real-world chains, the CT log lists, the peers'
/// fixtures), which the repository does not carry: one setting says where it is,
/// `PINCHECK_SHARED`, by default `../shared` beside the repository, or else the repository's
/// `.test-data` (what `scripts/fetch-test-data.sh` fetches). A suite that needs a dataset
/// is enabled only when it is there (`.enabled(if: SharedData.has("ct"), SharedData.needs("ct"))`),
/// so a clone without it runs every other suite; `scripts/test.sh` names what is missing, and with
/// `CI=true` refuses to run without it.
public enum SharedData {
    public static let root: URL = {
        if let path = ProcessInfo.processInfo.environment["PINCHECK_SHARED"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        // ../shared beside the repository; without it, the repository's own .test-data, where
        // scripts/fetch-test-data.sh puts what it fetches (as scripts/test.sh chooses).
        let repository = TestCertificates.root.deletingLastPathComponent()
        let beside = repository.deletingLastPathComponent().appendingPathComponent("shared")
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: beside.path, isDirectory: &isFolder), isFolder.boolValue { return beside }
        return repository.appendingPathComponent(".test-data")
    }()

    /// A file or folder of the data, e.g. `realworld/chains`.
    public static func url(_ relative: String) -> URL { root.appendingPathComponent(relative) }

    /// Whether a dataset's folder (e.g. `ct`, `peers/fixtures/trustkit`) is there.
    public static func has(_ dataset: String) -> Bool {
        var isFolder: ObjCBool = false
        return FileManager.default.fileExists(atPath: url(dataset).path, isDirectory: &isFolder) && isFolder.boolValue
    }

    /// Why a suite was skipped, for its trait.
    public static func needs(_ dataset: String) -> String {
        "needs the third-party data at \(url(dataset).path) (PINCHECK_SHARED; see that folder's README)"
    }
}
