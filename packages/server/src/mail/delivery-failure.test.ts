import { describe, expect, it } from 'vitest';
import { classifyDeliveryError, type DeliveryError } from './delivery-failure.js';

const error = (fields: Partial<DeliveryError>): DeliveryError => Object.assign(new Error('x'), fields);

describe('classifyDeliveryError', () => {
  it.each([
    ['connection refused (nodemailer)', { code: 'ECONNECTION', command: 'CONN' }],
    ['connection refused (node)', { code: 'ECONNREFUSED' }],
    ['connection reset', { code: 'ESOCKET' }],
    ['timeout', { code: 'ETIMEDOUT' }],
    ['TLS failure', { code: 'ETLS' }],
    ['421 at connect', { responseCode: 421, command: 'CONN' }],
    ['421 at DATA (the server is closing)', { responseCode: 421, command: 'DATA' }],
    ['554 greeting', { responseCode: 554, command: 'CONN' }],
    ['authentication refused', { code: 'EAUTH', responseCode: 535, command: 'AUTH PLAIN' }],
    ['SES throttling', { transportFailure: true }],
  ])('%s is the transport’s failure', (_, fields) => {
    expect(classifyDeliveryError(error(fields))).toBe('transport');
  });

  it.each([
    ['550 at RCPT TO', { code: 'EENVELOPE', responseCode: 550, command: 'RCPT TO' }, 'bounce'],
    ['552 at DATA', { code: 'EMESSAGE', responseCode: 552, command: 'DATA' }, 'bounce'],
    ['SES MessageRejected', { responseCode: 554 }, 'bounce'],
    ['450 mailbox busy', { code: 'EENVELOPE', responseCode: 450, command: 'RCPT TO' }, 'temporary'],
    ['451 at DATA', { responseCode: 451, command: 'DATA' }, 'temporary'],
    ['an error of Pigeon’s own (composition)', {}, 'temporary'],
  ])('%s is the message’s own failure', (_, fields, kind) => {
    expect(classifyDeliveryError(error(fields))).toBe(kind);
  });
});
