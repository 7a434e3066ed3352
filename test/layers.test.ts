// Layers point down (issue 36): routes and edge over the domain, the domain over store, content and chain, all of
// them over models and lib. Checked on the import graph of src/, read from the source text (static imports,
// re-exports and dynamic imports alike), so an import that runs back up fails here before anyone trips on it.
import { expect, test } from 'bun:test'
import { Glob } from 'bun'
import { dirname, join, relative } from 'node:path'

const SRC = join(import.meta.dir, '..', 'src')
const IMPORT =
  /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g

/** Each source file (relative to src/) with the source files it imports. */
const graph = new Map<string, string[]>()
for (const file of new Glob('**/*.ts').scanSync(SRC)) {
  const text = await Bun.file(join(SRC, file)).text()
  const imported = [...text.matchAll(IMPORT)].map((m) => relative(SRC, join(SRC, dirname(file), m[1] ?? m[2]!)))
  graph.set(file, imported)
}

/** The imports of the files `from` selects that `to` selects, as "file -> import". */
const importsFrom = (from: (file: string) => boolean, to: (target: string) => boolean) =>
  [...graph].filter(([file]) => from(file)).flatMap(([file, imported]) => imported.filter(to).map((target) => `${file} -> ${target}`))

/** The files reached from `start` by following imports. */
function reached(start: string): Set<string> {
  const seen = new Set<string>()
  const next = [start]
  while (next.length > 0) {
    const file = next.pop()!
    if (seen.has(file)) continue
    seen.add(file)
    next.push(...(graph.get(file) ?? []))
  }
  return seen
}

const inFolder = (folder: string) => (file: string) => file.startsWith(`${folder}/`)

test('the graph is read: the composition root imports the routes, the serving and the ops', () => {
  expect(graph.size).toBeGreaterThan(150)
  expect(graph.get('app.ts')).toContain('routes/feeds.ts')
  expect(graph.get('server.ts')).toEqual(expect.arrayContaining(['edge/serve.ts', 'routes/hot-reads.ts', 'ops/control.ts']))
})

test('nothing in edge imports the routes: the hot reads are handed to serve()', () => {
  expect(importsFrom(inFolder('edge'), inFolder('routes'))).toEqual([])
})

test('the domain reaches content only through its port (content/store.ts), never an adapter or the Helia store itself', () => {
  expect(importsFrom(inFolder('domain'), (target) => target.startsWith('content/') && target !== 'content/store.ts')).toEqual([])
})

test('ops and the composition root import each other in one direction only: nothing ops reaches imports app.ts or server.ts', () => {
  const root = ['app.ts', 'server.ts']
  const back = [...graph.keys()]
    .filter(inFolder('ops'))
    .flatMap((file) => [...reached(file)].filter((target) => root.includes(target)).map((target) => `${file} reaches ${target}`))
  expect(back).toEqual([])
  expect(graph.get('app.ts')).toContain('ops/data.ts') // the other direction, which stays
})

test('vocabulary lives in models: the store declares no record type and no word list of its own', async () => {
  const declared: string[] = []
  for (const file of new Glob('store/**/*.ts').scanSync(SRC)) {
    const text = await Bun.file(join(SRC, file)).text()
    for (const m of text.matchAll(/^export (?:interface|type) (\w+Record)\b|^export const ([A-Z][A-Z_]+) = \[/gm))
      declared.push(`${file}: ${m[1] ?? m[2]}`)
  }
  expect(declared).toEqual([])
})
