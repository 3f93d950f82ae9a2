// Identifiers as the contract gives them: UUIDs in any case.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `text` is a UUID (any case); anything else names no record. */
export const isUuid = (text: string): boolean => UUID.test(text);
