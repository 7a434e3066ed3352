// Builds dist/trellis: one self-contained executable (Bun runtime + bundled code + embedded assets).
//
//   bun scripts/build.ts [--outfile <path>] [--no-bytecode] [--no-minify] [--test-hooks]
//
// --test-hooks: an executable for the test suite (npm test), which keeps the test hooks (src/test-hooks.ts; they still
// need TRELLIS_TEST_HOOKS=1). Never ship one: every other build has none.
//
// Everything the server needs at run time is inside the file: the bundled JS (as JSC bytecode), the SQL
// migrations (text imports), the Swagger UI files (file imports) and two native addons, classic-level's LevelDB and
// secp256k1's libsecp256k1. Bun does not embed addons on its own: both packages find theirs at run time with
// node-gyp-build, which searches node_modules. The plugin below embeds this platform's prebuilt .node file as a plain
// file instead, and replaces the lookup with src/lib/native-addon.ts, which writes it once into the data directory's
// cache (not $TMPDIR, which may be read-only) and loads it from there.
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import type { BunPlugin } from 'bun'
import { BuildCommitError, buildCommit } from '../src/version.ts'

const ROOT = resolve(import.meta.dir, '..')
const args = process.argv.slice(2)
const flag = (name: string) => args.includes(name)
const option = (name: string) => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : undefined
}
for (const arg of args) {
  if (arg.startsWith('--') && !['--outfile', '--no-bytecode', '--no-minify', '--test-hooks'].includes(arg)) {
    console.error(
      `build: unknown option ${arg}\nUsage: bun scripts/build.ts [--outfile <path>] [--no-bytecode] [--no-minify] [--test-hooks]`,
    )
    process.exit(2)
  }
}
const outfile = resolve(ROOT, option('--outfile') ?? 'dist/trellis')
const bytecode = !flag('--no-bytecode')
const minify = !flag('--no-minify')

/** The prebuilt addon of a package for the platform we build on (the executable targets the same platform). */
function prebuiltAddon(packageName: string): string | null {
  const packageDir = dirname(Bun.resolveSync(`${packageName}/package.json`, ROOT))
  const prebuilds = join(packageDir, 'prebuilds')
  // prebuildify names directories <platform>-<arch>[+<arch>…], e.g. linux-x64, darwin-x64+arm64.
  const dir = readdirSync(prebuilds).find((name) => {
    const [platform, archs = ''] = name.split(/-(.*)/s)
    return platform === process.platform && archs.split('+').includes(process.arch)
  })
  if (!dir) return null
  const musl =
    process.platform === 'linux' &&
    !(process.report?.getReport() as { header?: { glibcVersionRuntime?: string } })?.header?.glibcVersionRuntime
  // Files are <name>[.<tag>…].node; tags name the libc (glibc, musl) or the ARM version (armv7, armv8).
  const candidates = readdirSync(join(prebuilds, dir)).filter((name) => {
    if (!name.endsWith('.node')) return false
    const tags = name.slice(0, -'.node'.length).split('.').slice(1)
    if (tags.includes('musl') !== musl || (musl && tags.includes('glibc'))) return false
    const libc = (t: string) => t === 'musl' || t === 'glibc'
    if (process.arch === 'arm64') return tags.every((t) => t === 'armv8' || libc(t))
    return tags.every(libc)
  })
  if (candidates.length !== 1)
    throw new Error(`cannot pick one ${packageName} addon in ${join(prebuilds, dir)}: ${candidates.join(', ') || 'none'}`)
  return join(prebuilds, dir, candidates[0]!)
}

const LOOKUP = "require('node-gyp-build')(__dirname)"
const LOADER = join(ROOT, 'src/lib/native-addon.ts')
const EMBEDDED = 'embedded-addon:'
// The file of each package that looks its addon up. LevelDB is required; without libsecp256k1 the server checks
// signatures with viem (about 7× slower), so a platform with no prebuilt one still builds.
const ADDONS = [
  { packageName: 'classic-level', loader: /[\\/]classic-level[\\/]binding\.js$/, required: true },
  { packageName: 'secp256k1', loader: /[\\/]secp256k1[\\/]bindings\.js$/, required: false },
].map((addon) => {
  const path = prebuiltAddon(addon.packageName)
  if (!path && addon.required) throw new Error(`${addon.packageName} has no prebuilt addon for ${process.platform}-${process.arch}`)
  return { ...addon, path }
})

const embedAddons: BunPlugin = {
  name: 'embed-addons',
  setup(build) {
    for (const addon of ADDONS) {
      build.onLoad({ filter: addon.loader }, ({ path }) => {
        // Fail loudly if an upgrade changes how the addon is loaded.
        const source = readFileSync(path, 'utf8')
        if (!source.includes(LOOKUP)) throw new Error(`${path} no longer loads its addon with node-gyp-build; update scripts/build.ts`)
        // The addon is embedded as a plain file and loaded by lib/native-addon.ts from a directory it chooses (Bun
        // would extract a required .node file to $TMPDIR, which may be read-only).
        const load = addon.path
          ? `require(${JSON.stringify(LOADER)}).loadEmbeddedAddon(${JSON.stringify(addon.packageName)}, ` +
            `require(${JSON.stringify(`${EMBEDDED}${addon.packageName}`)}).default)`
          : `(() => { throw new Error('no prebuilt ${addon.packageName} addon for this platform') })()`
        return { contents: source.replace(LOOKUP, load), loader: 'js' }
      })
    }
    build.onResolve({ filter: new RegExp(`^${EMBEDDED}`) }, ({ path }) => ({
      path: path.slice(EMBEDDED.length),
      namespace: 'embedded-addon',
    }))
    build.onLoad({ filter: /.*/, namespace: 'embedded-addon' }, ({ path }) => {
      const addon = ADDONS.find((a) => a.packageName === path)!
      return { contents: `import file from ${JSON.stringify(addon.path)} with { type: 'file' }\nexport default file\n`, loader: 'js' }
    })
  },
}

// `trellis --version` names the commit and the day of the build (UTC; SOURCE_DATE_EPOCH for reproducible builds).
// Defining these also leaves the test hooks out of the executable (src/test-hooks.ts).
const buildDate = new Date(process.env.SOURCE_DATE_EPOCH ? Number(process.env.SOURCE_DATE_EPOCH) * 1000 : Date.now())
  .toISOString()
  .slice(0, 10)
// The commit is TRELLIS_BUILD_COMMIT when the builder sets it (the Dockerfile's build argument: its context has no
// .git), else git's; a binary's commit is fixed here, never read from its environment at run time.
let commit: string | null
try {
  commit = buildCommit(ROOT)
} catch (error) {
  if (!(error instanceof BuildCommitError)) throw error
  console.error(`build: ${error.message}`)
  process.exit(2)
}
const define: Record<string, string> = {
  TRELLIS_BUILD_COMMIT: JSON.stringify(commit ?? 'unknown'),
  TRELLIS_BUILD_DATE: JSON.stringify(buildDate),
}
if (flag('--test-hooks')) define.TRELLIS_BUILD_TEST_HOOKS = 'true'

const started = performance.now()
const result = await Bun.build({
  // The workers (stats, signatures) are entrypoints too: Bun embeds them under /$bunfs/root/ by their path from src/.
  entrypoints: [join(ROOT, 'src/main.ts'), join(ROOT, 'src/jobs/long-reads-worker.ts'), join(ROOT, 'src/chain/signature-worker.ts')],
  target: 'bun',
  format: 'esm', // bytecode for ESM needs compile
  bytecode,
  minify,
  sourcemap: 'linked', // embedded (zstd) in the executable: stack traces in logs point at src/
  plugins: [embedAddons],
  define,
  metafile: true,
  throw: false,
  compile: {
    outfile,
    // Deterministic: this repository's bunfig.toml is a development file, never runtime configuration, and a .env
    // in the working directory must not switch the network: configuration is the flags and the environment.
    autoloadDotenv: false,
    autoloadBunfig: false,
    autoloadTsconfig: false,
    autoloadPackageJson: false,
  },
})

if (!result.success) {
  for (const log of result.logs) console.error(log)
  console.error('build: failed')
  process.exit(1)
}

// Guard against silently shipping a binary that would look for files in node_modules at run time.
const meta = (typeof result.metafile === 'string' ? JSON.parse(result.metafile) : result.metafile) as { inputs: Record<string, unknown> }
const inputs = Object.keys(meta.inputs).map((p) => resolve(p)) // relative to the working directory
const problems: string[] = []
if (inputs.some((p) => /[\\/]node-gyp-build[\\/]/.test(p)))
  problems.push('node-gyp-build is still bundled (the addon would be searched for at run time)')
for (const addon of ADDONS)
  if (addon.path && !inputs.includes(addon.path))
    problems.push(`the ${addon.packageName} addon ${relative(ROOT, addon.path)} is not embedded`)
if (problems.length) {
  console.error(`build: ${problems.join('; ')}`)
  process.exit(1)
}

// The source map is embedded in the executable (stack traces point at src/); the copy written next to it is not needed.
for (const output of result.outputs) if (output.kind === 'sourcemap') rmSync(output.path, { force: true })

// Smoke test: the executable runs (this does not touch node_modules).
const version = Bun.spawnSync([outfile, '--version'], { cwd: dirname(outfile), stdout: 'pipe', stderr: 'pipe' })
if (version.exitCode !== 0 || !version.stdout.toString().startsWith('trellis ')) {
  console.error(`build: ${outfile} --version failed (exit ${version.exitCode}):\n${version.stdout}${version.stderr}`)
  process.exit(1)
}

const mb = (statSync(outfile).size / 1024 / 1024).toFixed(1)
const ms = Math.round(performance.now() - started)
console.log(
  `build: ${relative(process.cwd(), outfile) || outfile} (${mb} ` +
    `MiB, ${bytecode ? 'bytecode' : 'no bytecode'}, ${minify ? 'minified' : 'not minified'}, ` +
    `addons ${ADDONS.map((a) => (a.path ? relative(ROOT, a.path) : `${a.packageName}: none`)).join(', ')}) ` +
    `in ${ms} ms — ${version.stdout.toString().trim()}`,
)
