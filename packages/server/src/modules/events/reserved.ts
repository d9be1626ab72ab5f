const EXACT = new Set([
  'contact.subscribed',
  'contact.unsubscribed',
  'contact.topic.subscribed',
  'contact.topic.unsubscribed',
]);
const SEGMENT_EVENT = /^segment\.[^.]+\.(entry|exit)$/;

/** Names Pigeon emits itself (spec §6); compared case-insensitively so look-alikes are refused too. */
export function isReservedEventName(name: string): boolean {
  const lower = name.toLowerCase();
  return EXACT.has(lower) || lower.startsWith('email.') || SEGMENT_EVENT.test(lower);
}
