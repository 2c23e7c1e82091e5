/// The release a binary is: its version (what the packages are numbered by) and the commit of
/// the source tree it was built from (written at build time by the `ReleaseCommit` plugin).
public enum Release {
    public static let version = "0.1.0"
    /// The commit, `-dirty` when the tree had changes, or `unknown` (a tree without git).
    public static let commit = releaseCommit
    /// What `--version` prints: `0.1.0 (commit 1a2b3c4d5e6f)`.
    public static let line = "\(version) (commit \(commit))"
}
