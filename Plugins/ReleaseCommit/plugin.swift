import Foundation
import PackagePlugin

/// Writes `Commit.swift` — `let releaseCommit = "…"`, the source tree's commit — for the target
/// that uses it, so `--version` names the commit a binary was built from: `git rev-parse` in the
/// package's folder (with `-dirty` when the tree has changes), else the `.release-commit` file a
/// copied tree carries (packaging/build-arm64 writes one), else `unknown`. The file is rewritten
/// only when that changes, so a build that changes nothing compiles nothing.
///
/// A build command with declared inputs, not a prebuild command: SwiftPM runs a prebuild command
/// only when it plans the build again, which an incremental build whose manifest and sources
/// have not changed skips (swiftlang/swift-package-manager#5476) — a commit that touched no
/// Swift file left the binary naming the commit before it. The inputs are what a commit, a
/// checkout or a staged change writes in `.git` (HEAD, its reflog, the index), a copied tree's
/// `.release-commit`, and the package's Swift sources (an edit makes the tree dirty); the
/// command runs again when one of them changes.
@main struct ReleaseCommit: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let folder = context.pluginWorkDirectoryURL.appending(path: "generated")
        let output = folder.appending(path: "Commit.swift")
        let package = context.package.directoryURL
        let script = #"""
            pkg=$1 out=$2
            mkdir -p "$(dirname "$out")"
            commit=$(git -C "$pkg" rev-parse --short=12 HEAD 2>/dev/null) || commit=""
            if [ -n "$commit" ] && [ -n "$(git -C "$pkg" status --porcelain --untracked-files=no 2>/dev/null)" ]; then commit="$commit-dirty"; fi
            [ -n "$commit" ] || commit=$(head -c 40 "$pkg/.release-commit" 2>/dev/null | tr -cd '0-9a-z-') || true
            line="let releaseCommit = \"${commit:-unknown}\""
            [ "$(cat "$out" 2>/dev/null)" = "$line" ] || printf '%s\n' "$line" > "$out"
            """#
        let git = package.appending(path: ".git")
        let marks = ["HEAD", "logs/HEAD", "index"].map { git.appending(path: $0) } + [package.appending(path: ".release-commit")]
        let sources = context.package.targets.compactMap { $0 as? SourceModuleTarget }.flatMap { $0.sourceFiles(withSuffix: "swift").map(\.url) }
        return [.buildCommand(displayName: "The source tree's commit", executable: URL(fileURLWithPath: "/bin/sh"),
                              arguments: ["-c", script, "sh", package.path, output.path],
                              inputFiles: marks.filter { FileManager.default.fileExists(atPath: $0.path) } + sources,
                              outputFiles: [output])]
    }
}
