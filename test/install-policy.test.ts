// The install runs exactly the dependency scripts the product needs: Bun's (it puts the runtime in place) and the two
// native addons' (they build when no prebuilt binary fits). Everything else is denied, telemetry included, and npm
// refuses an unreviewed one (strict-allow-scripts in .npmrc), so a new dependency's script fails the install.
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { isBuiltin } from 'node:module'
import { join } from 'node:path'

const ROOT = join(import.meta.dir, '..')
const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  allowScripts: Record<string, boolean>
  dependencies: Record<string, string>
  devDependencies: Record<string, string>
}

test('package.json approves the scripts the product needs and denies the rest', () => {
  const approved = Object.entries(packageJson.allowScripts)
    .filter(([, allowed]) => allowed)
    .map(([name]) => name)
    .sort()
  expect(approved).toEqual(['bun', 'classic-level', 'secp256k1'])
  expect(packageJson.allowScripts['@scarf/scarf']).toBe(false)
})

test('npm enforces the policy and every installed script is reviewed', () => {
  const npmrc = readFileSync(join(ROOT, '.npmrc'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
  expect(npmrc).toContain('strict-allow-scripts=true')
  const listed = Bun.spawnSync(['npm', 'install-scripts', 'ls'], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  expect(listed.exitCode).toBe(0)
  expect(listed.stdout.toString()).toContain('No packages with unreviewed install scripts')
})

test('the image is built on a supported Node line', () => {
  const from = /^FROM node:(\d+)/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))
  expect(Number(from?.[1])).toBeGreaterThanOrEqual(22)
})

// The README's start command installs `dependencies` alone (npm ci --omit=dev): a package src/ loads that only a
// devDependency brings would pass every test on the full install and fail the lean one at its first import.
const packageOf = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/')

/** The packages src/ loads when it runs (type-only imports are erased), each with a file that loads it. */
function runtimeImports(): Map<string, string> {
  const transpiler = new Bun.Transpiler({ loader: 'ts' })
  const found = new Map<string, string>()
  for (const file of new Bun.Glob('**/*.ts').scanSync(join(ROOT, 'src'))) {
    if (file.endsWith('.d.ts')) continue
    for (const { path } of transpiler.scanImports(readFileSync(join(ROOT, 'src', file), 'utf8'))) {
      if (path.startsWith('.') || path.startsWith('/') || isBuiltin(path)) continue
      if (!found.has(packageOf(path))) found.set(packageOf(path), `src/${file}`)
    }
  }
  return found
}

test('every package src/ loads at run time is a dependency, Bun (the runtime) among them', () => {
  const imported = runtimeImports()
  expect(imported.size).toBeGreaterThan(10)
  const missing = [...imported].filter(([name]) => !(name in packageJson.dependencies)).map(([name, file]) => `${name} (${file})`)
  expect(missing).toEqual([])
  expect(packageJson.dependencies.bun).toBeDefined()
  expect(packageJson.devDependencies.bun).toBeUndefined()
})

test('dependencies hold only what the server runs: what src/ loads, Bun, and the peers those require', () => {
  // .npmrc omits peers, so a dependency's required peer (elysia's file-type) is installed only when listed here.
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { peerDependencies?: Record<string, string>; peerDependenciesMeta?: Record<string, { optional?: boolean }> }>
  }
  const requiredPeers = Object.keys(packageJson.dependencies).flatMap((name) => {
    const locked = lock.packages[`node_modules/${name}`] ?? {}
    return Object.keys(locked.peerDependencies ?? {}).filter((peer) => !locked.peerDependenciesMeta?.[peer]?.optional)
  })
  const needed = new Set(['bun', ...runtimeImports().keys(), ...requiredPeers])
  expect(Object.keys(packageJson.dependencies).filter((name) => !needed.has(name))).toEqual([])
})

test("the lean installs omit dev dependencies and keep .npmrc's omissions; the test command installs everything", () => {
  // A command-line --omit replaces .npmrc's omit list instead of adding to it: `npm ci --omit=dev` alone installs the
  // peers .npmrc leaves out (999 packages here, more than the full install's 994).
  const omitted = (command: string) => [...command.matchAll(/--omit[= ](\w+)/g)].map((match) => match[1]).sort()
  const npmrcOmits = readFileSync(join(ROOT, '.npmrc'), 'utf8')
    .split('\n')
    .flatMap((line) => /^\s*omit\s*=\s*(\w+)/.exec(line)?.[1] ?? [])
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const commands = [...readme.slice(0, readme.indexOf('\n## ')).matchAll(/`([^`]*npm ci[^`]*)`/g)].map((match) => match[1]!)
  const start = commands.find((command) => command.includes('npm start'))
  const dockerInstall = /^RUN .*npm\S* ci.*$/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))?.[0]
  for (const lean of [start, dockerInstall]) {
    expect(lean).toBeDefined()
    expect(omitted(lean!)).toEqual([...new Set(['dev', ...npmrcOmits])].sort())
  }
  expect(commands.find((command) => command.includes('npm test'))).toBe('npm ci && npm test')
})
