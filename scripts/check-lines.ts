// `bun scripts/check-lines.ts`: the limits the formatter cannot keep. Biome wraps code at 140 columns but leaves
// comments and string literals as they are, and it does not count a file's lines; this fails (exit 1, one
// file:line per finding) on a line of src/, test/, scripts/ or dev/ (*.ts) longer than 140 characters and on a file
// of src/ longer than 300 lines. `npm run lint` runs it after `biome ci`; docs/style.md says why the limits exist.
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'

const MAX_LINE = 140
const MAX_SRC_FILE_LINES = 300
const root = join(import.meta.dir, '..')

function tsFiles(folder: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort()
}

const findings: string[] = []
for (const folder of ['src', 'test', 'scripts', 'dev']) {
  for (const file of tsFiles(folder)) {
    const lines = readFileSync(join(root, file), 'utf8').split('\n')
    if (lines.at(-1) === '') lines.pop()
    // Characters, not UTF-16 units: `µs` or `→` in a comment counts once, as an editor shows it.
    lines.forEach((line, i) => {
      const length = [...line].length
      if (length > MAX_LINE) findings.push(`${file}:${i + 1}: ${length} characters (at most ${MAX_LINE})`)
    })
    if (folder === 'src' && lines.length > MAX_SRC_FILE_LINES) {
      findings.push(`${file}: ${lines.length} lines (a file of src/ has at most ${MAX_SRC_FILE_LINES})`)
    }
  }
}
for (const finding of findings) process.stderr.write(`${finding}\n`)
if (findings.length > 0) {
  process.stderr.write(`check-lines: ${findings.length} finding(s)\n`)
  process.exit(1)
}
