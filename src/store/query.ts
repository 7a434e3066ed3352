// One SQL text per statement, which either engine runs: a tagged template whose values become parameters, never
// text. A Query among the values is a fragment, spliced in with its own parameters (a WHERE built from filters).
// Each adapter renders a Query in its own placeholder style (SQLite `?`, PostgreSQL `$1`).

export interface Query {
  readonly strings: readonly string[]
  readonly values: readonly unknown[]
}

const QUERY = Symbol('query')
type Tagged = Query & { readonly [QUERY]: true }

const isQuery = (value: unknown): value is Query => typeof value === 'object' && value !== null && QUERY in value

export function q(strings: TemplateStringsArray | readonly string[], ...values: unknown[]): Query {
  return { strings, values, [QUERY]: true } as Tagged
}

/** The parts, one after another with `separator` (plain SQL text) between them. */
export function join(parts: readonly Query[], separator: string): Query {
  if (parts.length === 0) return q``
  const strings = ['']
  const values: unknown[] = []
  parts.forEach((part, i) => {
    if (i > 0) strings[strings.length - 1] += separator
    values.push(part)
    strings.push('')
  })
  return q(strings, ...values)
}

/** Plain SQL text that is not a value: a name chosen by the code (a column of a patch), never one from a request. */
export const sqlText = (text: string): Query => q([text])

export interface Rendered {
  text: string
  values: unknown[]
}

/** Texts of queries without fragments, by their template: rendering a statement is a lookup after its first time. */
const renderedTexts = new WeakMap<readonly string[], Map<string, string>>()

/** The text of `query` with `placeholder(n)` (1-based) for each parameter, and the parameters in order. */
export function render(query: Query, style: '?' | '$'): Rendered {
  if (!query.values.some(isQuery)) {
    let byStyle = renderedTexts.get(query.strings)
    let text = byStyle?.get(style)
    if (text === undefined) {
      text = query.strings.reduce((sql, part, i) => `${sql}${style === '?' ? '?' : `$${i}`}${part}`)
      if (!byStyle) renderedTexts.set(query.strings, (byStyle = new Map()))
      byStyle.set(style, text)
    }
    return { text, values: query.values as unknown[] }
  }
  const values: unknown[] = []
  let text = ''
  const walk = (part: Query) => {
    part.strings.forEach((piece, i) => {
      text += piece
      if (i === part.strings.length - 1) return
      const value = part.values[i]
      if (isQuery(value)) walk(value)
      else {
        values.push(value)
        text += style === '?' ? '?' : `$${values.length}`
      }
    })
  }
  walk(query)
  return { text, values }
}

/** Statements either engine runs. `run` answers how many rows it changed. */
export interface Sql {
  all<T>(query: Query): Promise<T[]>
  get<T>(query: Query): Promise<T | undefined>
  run(query: Query): Promise<number>
}
