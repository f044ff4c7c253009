/**
 * How a request ends and the event each ending sends are written once in intents/request-ends.ts:
 * an intent's own changes (paid elsewhere, cancelled, expired) end its request too, and intents
 * sits below this module.
 */
export { endedStatus, REQUEST_EVENTS, type EndedRequestStatus } from '../intents/request-ends.js';
