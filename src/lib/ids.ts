// UUIDv7 ids are time-ordered: "newest first" is id descending and a cursor is an id.
export const newId = (): string => Bun.randomUUIDv7()

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
export const isUuid = (value: string): boolean => UUID.test(value)
