import Foundation
import Testing

/// The third-party test data (x509-limbo, the real-world chains, the CT log lists, the peers'
/// fixtures), which the repository does not carry: one setting says where it is,
/// `PINCHECK_SHARED`, by default `../shared` beside the repository, or else the repository's
/// `.test-data` (what `scripts/fetch-test-data.sh` fetches). A suite that needs a dataset
/// is enabled only when it is there, and skipped with the reason otherwise (`SharedData.requires("ct")`),
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

    /// Why a suite was skipped, for its trait: what is missing, where it was looked for, and where
    /// to get it (the page and the script, both in this repository: the missing folder's README is
    /// not there to read).
    public static func needs(_ datasets: String...) -> String { needs(datasets) }

    static func needs(_ datasets: [String]) -> String {
        let missing = datasets.filter { !has($0) }
        let named = (missing.isEmpty ? datasets : missing).map { "\($0) (\(url($0).path))" }.joined(separator: ", ")
        return "third-party test data missing: \(named). docs/test-data.md says what it is; scripts/fetch-test-data.sh fetches it (PINCHECK_DATA_URL), or PINCHECK_SHARED names a copy"
    }

    /// The trait of a suite or test that reads these datasets: enabled only when every one is
    /// there, and skipped with ``needs(_:)-swift.type.method`` as its reason otherwise.
    public static func requires(_ datasets: String...) -> ConditionTrait {
        .enabled(if: datasets.allSatisfy(has), Comment(rawValue: needs(datasets)))
    }
}
