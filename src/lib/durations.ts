// Durations as people say them, for the words about a pass: the API's 402 description, the pages, the MCP tools
// (which reach no domain code, so this lives below all of them).

const UNITS: [number, string][] = [
  [31_536_000, 'year'],
  [86_400, 'day'],
  [3_600, 'hour'],
  [60, 'minute'],
]

/** A duration as people say it: "30 days", "1 hour", "90 seconds". */
export function spokenDuration(seconds: number): string {
  const [size, unit] = UNITS.find(([size]) => seconds % size === 0) ?? [1, 'second']
  const n = seconds / size
  return `${n} ${unit}${n === 1 ? '' : 's'}`
}
