import type { TestApp } from '../support/harness.js';

export const RICH = { phone: '+22220000001', pin: '1234' };
export const NEARLY_EMPTY = { phone: '+22220000002', pin: '1234' };
export const LOCKED = { phone: '+22220000003', pin: '1234' };

export function pay(t: TestApp, shortCode: string, body: Record<string, unknown>) {
  return t.request('POST', `/checkout/intents/${shortCode}/pay`, { body });
}

export async function walletBalance(t: TestApp, phone: string, environment: 'test' | 'live' = 'test'): Promise<number> {
  const response = await t.admin('GET', `/wallets?phone=${encodeURIComponent(phone)}&environment=${environment}`);
  return response.body.data.balance;
}

export async function merchantBalance(t: TestApp, key: string): Promise<number> {
  const response = await t.request('GET', '/api/v1/dev/balance', { key });
  return response.body.data.available;
}
