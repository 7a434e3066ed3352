// Reading feed documents as a reader does: RSS 2.0 and Atom checked by their RELAX NG schemas (test/schemas/, run by
// libxml2 compiled to wasm: a document that is not well-formed XML fails too), JSON Feed 1.1 by its JSON Schema
// (the jsonfeed-schema package, run by Ajv); elements picked out as text, and their text as an XML parser hands it over.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { validateXML } from 'xmllint-wasm'
import Ajv from 'ajv'
import addFormats from 'ajv-formats'
import jsonFeedSchema from 'jsonfeed-schema/schema-v1.1.json'

const SCHEMAS = join(import.meta.dir, '..', 'schemas')
const rng = (name: string) => ({ fileName: name, contents: readFileSync(join(SCHEMAS, name), 'utf8') })

/** The schema's complaints about `xml` (`rss2.rng` or `atom.rng`): none for a valid document. */
export async function validXml(xml: string, schema: 'rss2.rng' | 'atom.rng'): Promise<string[]> {
  const result = await validateXML({ xml: [{ fileName: 'feed.xml', contents: xml }], schema: [rng(schema)], extension: 'relaxng' })
  return result.errors.map((e) => e.rawMessage)
}

const ajv = new Ajv({ allErrors: true, strict: false })
addFormats(ajv)
/** JSON Feed 1.1's schema; its `errors` say what failed. */
export const checkJsonFeed = ajv.compile(jsonFeedSchema)

/** The elements named `tag`, as text (no nesting of one name in these documents). */
export const elements = (xml: string, tag: string) =>
  [...xml.matchAll(new RegExp(`<${tag}\\b[^>]*?(?:/>|>[\\s\\S]*?</${tag}>)`, 'g'))].map((m) => m[0])

/** An element's text as an XML parser hands it over: its character references resolved, once. */
export const xmlText = (element: string) =>
  element
    .replace(/^<[^>]+>|<\/[^>]+>$/g, '')
    .replace(/&(lt|gt|quot|#39|amp);/g, (_, name: string) => ({ lt: '<', gt: '>', quot: '"', '#39': "'", amp: '&' })[name]!)

/** The item (`item` in RSS, `entry` in Atom) of the entry `id`. */
export const itemOf = (xml: string, tag: 'item' | 'entry', id: string) => elements(xml, tag).find((i) => i.includes(`urn:uuid:${id}`))!
