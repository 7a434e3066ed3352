// Word lists declared once (issue 36, one source): what the API documents and answers follows the list in
// src/models, so a name added there is served and documented, and no other copy can drift from it.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startInProcess, type InProcessApp } from '../dev/in-process.ts'
import { call } from '../dev/api.ts'
import { join } from 'node:path'
import { BOARDS, PAGED_BOARDS, PERIOD_BOARDS, WHOLE_BOARDS } from '../src/models/leaderboard.ts'
import { CHAIN_ID_HEADER, SIGNED_HEADER_NAMES } from '../src/models/auth.ts'
import * as models from '../src/models/index.ts'
import { TypeGuard } from '@sinclair/typebox'

let app: InProcessApp
let doc: any
beforeAll(async () => {
  app = await startInProcess({})
  doc = (await call(app, 'GET', '/v1/openapi.json')).body
})
afterAll(() => app.dispose())

test("the leaderboards served and documented are the models' list, each with its item and its ranking", async () => {
  const documented = Object.keys(doc.paths)
    .filter((path) => path.startsWith('/v1/leaderboards/'))
    .map((path) => path.slice('/v1/leaderboards/'.length))
  expect(documented.sort()).toEqual([...Object.keys(BOARDS), 'recent-entries'].sort())
  expect([...PERIOD_BOARDS, ...PAGED_BOARDS, ...WHOLE_BOARDS].sort() as string[]).toEqual(Object.keys(BOARDS).sort())
  const parameters = (board: string) => (doc.paths[`/v1/leaderboards/${board}`].get.parameters ?? []).map((p: any) => p.name).sort()
  /** The fields of the item a board's 200 documents (a $ref to a component). */
  const itemFields = (board: string) => {
    const ref: string =
      doc.paths[`/v1/leaderboards/${board}`].get.responses['200'].content['application/json'].schema.properties.data.items.$ref
    return Object.keys(doc.components.schemas[ref.split('/').pop()!].properties).sort()
  }
  for (const board of PERIOD_BOARDS)
    expect({ board, parameters: parameters(board) }).toEqual({ board, parameters: ['page_size', 'period'] })
  for (const board of PAGED_BOARDS) expect({ board, parameters: parameters(board) }).toEqual({ board, parameters: ['page_size'] })
  for (const board of WHOLE_BOARDS) expect({ board, parameters: parameters(board) }).toEqual({ board, parameters: [] })
  for (const [board, { item }] of Object.entries(BOARDS)) {
    expect({ board, fields: itemFields(board) }).toEqual({ board, fields: Object.keys(item.properties).sort() })
    const reply = await call(app, 'GET', `/v1/leaderboards/${board}`)
    expect({ board, status: reply.status, data: Array.isArray(reply.body.data) }).toEqual({ board, status: 200, data: true })
  }
})

test("the wallet-auth headers documented, and sent by the pages, are the models' list", async () => {
  const schemes = Object.values<any>(doc.components.securitySchemes).filter((scheme) => scheme.name !== 'admin-api-key')
  expect(schemes.map((scheme) => scheme.name)).toEqual(SIGNED_HEADER_NAMES)
  const headerParameters = Object.values<any>(doc.paths)
    .flatMap((operations) => Object.values<any>(operations))
    .flatMap((op) => op.parameters ?? [])
    .filter((p: any) => p.in === 'header' && p.name.startsWith('x-'))
  expect(headerParameters.length).toBeGreaterThan(0)
  expect(new Set(headerParameters.map((p: any) => p.name))).toEqual(new Set([CHAIN_ID_HEADER]))
  // The browser scripts cannot import the list: each names every header of it, as the object keys it sends.
  for (const asset of ['explorer.js', 'trellis.js']) {
    const script = await Bun.file(join(import.meta.dir, '..', 'src', 'pages', 'assets', asset)).text()
    for (const name of SIGNED_HEADER_NAMES)
      expect({ asset, name, sent: script.includes(`'${name}': `) }).toEqual({ asset, name, sent: true })
  }
})

test("the OpenAPI components are the models' shapes, each by its name (ErrorBody as Error): no list kept beside them", () => {
  const shapes = Object.entries(models)
    .filter(([, schema]) => TypeGuard.IsObject(schema) || TypeGuard.IsUnion(schema))
    .map(([name]) => name.replace(/Body$/, ''))
  expect(Object.keys(doc.components.schemas).sort()).toEqual(shapes.sort())
  // Among them what no route answers: the body of a webhook delivery, one shape per event.
  expect(doc.components.schemas.WebhookPayload.anyOf.map((shape: any) => shape.properties.type.const)).toEqual([
    'sale.recorded',
    'entry.expired',
    'pass.sold',
    'pass.expired',
    'entry.published',
    'ping',
  ])
})
