// What is running: the version, and which commit it was built from. scripts/build.ts bakes the commit and the build
// date into the executable (Bun.build `define`); from source the commit is asked of git when the version is printed.
export const VERSION = '0.1.0'

declare const TRELLIS_BUILD_COMMIT: string
declare const TRELLIS_BUILD_DATE: string

/** The executable's build (commit and UTC date, from scripts/build.ts); null when running from source. */
export const BUILD: { commit: string; date: string } | null =
  typeof TRELLIS_BUILD_COMMIT === 'string' ? { commit: TRELLIS_BUILD_COMMIT, date: TRELLIS_BUILD_DATE } : null

/** The short commit of the checkout at `dir`, `-dirty` when tracked files differ from it; null without git. */
export function gitCommit(dir: string): string | null {
  const git = (...args: string[]) => {
    try {
      const run = Bun.spawnSync(['git', ...args], { cwd: dir, stdout: 'pipe', stderr: 'ignore' })
      return run.exitCode === 0 ? run.stdout.toString().trim() : null
    } catch {
      return null // no git on this machine
    }
  }
  const commit = git('rev-parse', '--short=7', 'HEAD')
  if (!commit) return null
  return git('status', '--porcelain', '--untracked-files=no') ? `${commit}-dirty` : commit
}

/** `trellis 0.1.0 (commit abc1234, built 2026-11-24)`; from source `(commit abc1234, from source)`. */
export function versionLine(): string {
  if (BUILD) return `trellis ${VERSION} (commit ${BUILD.commit}, built ${BUILD.date})`
  return `trellis ${VERSION} (commit ${gitCommit(import.meta.dir) ?? 'unknown'}, from source)`
}
