// The install runs exactly the dependency scripts the product needs: Bun's (it puts the runtime in place) and the two
// native addons' (they build when no prebuilt binary fits). Everything else is denied, telemetry included, and npm
// refuses an unreviewed one (strict-allow-scripts in .npmrc), so a new dependency's script fails the install.
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const ROOT = join(import.meta.dir, '..')
const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { allowScripts: Record<string, boolean> }

test('package.json approves the scripts the product needs and denies the rest', () => {
  const approved = Object.entries(packageJson.allowScripts).filter(([, allowed]) => allowed).map(([name]) => name).sort()
  expect(approved).toEqual(['bun', 'classic-level', 'secp256k1'])
  expect(packageJson.allowScripts['@scarf/scarf']).toBe(false)
})

test('npm enforces the policy and every installed script is reviewed', () => {
  const npmrc = readFileSync(join(ROOT, '.npmrc'), 'utf8').split('\n').map((line) => line.trim())
  expect(npmrc).toContain('strict-allow-scripts=true')
  const listed = Bun.spawnSync(['npm', 'install-scripts', 'ls'], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  expect(listed.exitCode).toBe(0)
  expect(listed.stdout.toString()).toContain('No packages with unreviewed install scripts')
})

test('the image is built on a supported Node line', () => {
  const from = /^FROM node:(\d+)/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))
  expect(Number(from?.[1])).toBeGreaterThanOrEqual(22)
})
