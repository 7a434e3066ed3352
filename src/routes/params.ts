// Path and query parameters shared by several resources.
import { isUuid } from '../lib/ids.ts'
import { DomainError } from '../domain/errors.ts'

/** Malformed ids are 400 INVALID_PARAMETER, checked by hand so the order "401 before 400" holds everywhere. */
export function uuid(value: string, name: string, code = 'INVALID_PARAMETER'): string {
  if (!isUuid(value)) throw new DomainError(code, `invalid ${name}`, `${name} must be a UUID`)
  return value.toLowerCase()
}

export function booleanQuery(value: string | undefined, name: string): boolean | undefined {
  if (value === undefined || value === '') return undefined
  if (value === 'true' || value === '1') return true
  if (value === 'false' || value === '0') return false
  throw new DomainError('INVALID_PARAMETER', `invalid ${name}`, `${name} must be true or false`)
}

export function integerQuery(value: string | undefined, name: string, min = 0): number | undefined {
  if (value === undefined || value === '') return undefined
  if (!/^\d{1,12}$/.test(value) || Number(value) < min)
    throw new DomainError('INVALID_PARAMETER', `invalid ${name}`, `${name} must be an integer ≥ ${min}`)
  return Number(value)
}
