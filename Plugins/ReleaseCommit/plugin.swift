import Foundation
import PackagePlugin

/// Writes `Commit.swift` — `let releaseCommit = "…"`, the source tree's commit — before every
/// build of the target that uses it, so `--version` names the commit a binary was built from:
/// `git rev-parse` in the package's folder (with `-dirty` when the tree has changes), else the
/// `.release-commit` file a copied tree carries (packaging/build-arm64 writes one), else
/// `unknown`. The file is rewritten only when that changes, so a build that changes nothing
/// compiles nothing.
@main struct ReleaseCommit: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let folder = context.pluginWorkDirectoryURL.appending(path: "generated")
        let script = #"""
            pkg=$1 out=$2/Commit.swift
            mkdir -p "$2"
            commit=$(git -C "$pkg" rev-parse --short=12 HEAD 2>/dev/null) || commit=""
            if [ -n "$commit" ] && [ -n "$(git -C "$pkg" status --porcelain --untracked-files=no 2>/dev/null)" ]; then commit="$commit-dirty"; fi
            [ -n "$commit" ] || commit=$(head -c 40 "$pkg/.release-commit" 2>/dev/null | tr -cd '0-9a-z-') || true
            line="let releaseCommit = \"${commit:-unknown}\""
            [ "$(cat "$out" 2>/dev/null)" = "$line" ] || printf '%s\n' "$line" > "$out"
            """#
        return [.prebuildCommand(displayName: "The source tree's commit", executable: URL(fileURLWithPath: "/bin/sh"),
                                 arguments: ["-c", script, "sh", context.package.directoryURL.path, folder.path],
                                 outputFilesDirectory: folder)]
    }
}
