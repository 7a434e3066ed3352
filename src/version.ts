// What is running: the version, and which commit it was built from. scripts/build.ts bakes the commit and the build
// date into the executable (Bun.build `define`); from source the commit is found when the version is printed. Either
// way TRELLIS_BUILD_COMMIT, when set, names the commit: a builder without `.git` (a source tarball, the Dockerfile's
// build context) knows it and git cannot tell it.
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

// A commit hash or a `git describe` name: it is printed inside `(commit …, …)` and in build logs, so nothing that
// could break the line (spaces, parentheses, commas, control characters).
const COMMIT_NAME = /^[0-9A-Za-z][0-9A-Za-z._+-]{0,63}$/

/** Thrown for a TRELLIS_BUILD_COMMIT that cannot be printed as a commit. */
export class BuildCommitError extends Error {}

/** The commit a build or a run from source names: TRELLIS_BUILD_COMMIT when set (empty counts as unset), else git's
 *  answer for `dir`, else null. */
export function buildCommit(dir: string, env: Record<string, string | undefined> = process.env): string | null {
  const named = env.TRELLIS_BUILD_COMMIT?.trim()
  if (!named) return gitCommit(dir)
  if (!COMMIT_NAME.test(named)) {
    throw new BuildCommitError(
      `TRELLIS_BUILD_COMMIT must be a commit hash or name (letters, digits, . _ + -, at most 64), got ${JSON.stringify(named)}`,
    )
  }
  return named
}

/** `trellis 0.1.0 (commit abc1234, built 2026-11-24)`; from source `(commit abc1234, from source)`. */
export function versionLine(): string {
  if (BUILD) return `trellis ${VERSION} (commit ${BUILD.commit}, built ${BUILD.date})`
  return `trellis ${VERSION} (commit ${buildCommit(import.meta.dir) ?? 'unknown'}, from source)`
}
