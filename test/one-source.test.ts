// Word lists declared once (issue 36, one source): what the API documents and answers follows the list in
// src/models, so a name added there is served and documented, and no other copy can drift from it.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startInProcess, type InProcessApp } from '../dev/in-process.ts'
import { call } from '../dev/api.ts'
import { BOARDS, PAGED_BOARDS, PERIOD_BOARDS, WHOLE_BOARDS } from '../src/models/leaderboard.ts'

let app: InProcessApp
let doc: any
beforeAll(async () => {
  app = await startInProcess({})
  doc = (await call(app, 'GET', '/v1/openapi.json')).body
})
afterAll(() => app.dispose())

test('the leaderboards served and documented are the models\' list, each with its item and its ranking', async () => {
  const documented = Object.keys(doc.paths).filter((path) => path.startsWith('/v1/leaderboards/')).map((path) => path.slice('/v1/leaderboards/'.length))
  expect(documented.sort()).toEqual([...Object.keys(BOARDS), 'recent-entries'].sort())
  expect([...PERIOD_BOARDS, ...PAGED_BOARDS, ...WHOLE_BOARDS].sort() as string[]).toEqual(Object.keys(BOARDS).sort())
  const parameters = (board: string) => (doc.paths[`/v1/leaderboards/${board}`].get.parameters ?? []).map((p: any) => p.name).sort()
  /** The fields of the item a board's 200 documents (a $ref to a component). */
  const itemFields = (board: string) => {
    const ref: string = doc.paths[`/v1/leaderboards/${board}`].get.responses['200'].content['application/json'].schema.properties.data.items.$ref
    return Object.keys(doc.components.schemas[ref.split('/').pop()!].properties).sort()
  }
  for (const board of PERIOD_BOARDS) expect({ board, parameters: parameters(board) }).toEqual({ board, parameters: ['page_size', 'period'] })
  for (const board of PAGED_BOARDS) expect({ board, parameters: parameters(board) }).toEqual({ board, parameters: ['page_size'] })
  for (const board of WHOLE_BOARDS) expect({ board, parameters: parameters(board) }).toEqual({ board, parameters: [] })
  for (const [board, { item }] of Object.entries(BOARDS)) {
    expect({ board, fields: itemFields(board) }).toEqual({ board, fields: Object.keys(item.properties).sort() })
    const reply = await call(app, 'GET', `/v1/leaderboards/${board}`)
    expect({ board, status: reply.status, data: Array.isArray(reply.body.data) }).toEqual({ board, status: 200, data: true })
  }
})
