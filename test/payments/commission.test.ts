import assert from 'node:assert/strict';
import { describe, test } from 'vitest';
import {
  includedTax,
  NO_FEES,
  paymentCommission,
  refundCommission,
  withCharge,
  withRefund,
} from '../../src/modules/payments/fees.js';
import { maskPhone } from '../../src/lib/phone.js';

const MODEL = { revenueModel: 'COMMISSION', marginBps: 1000 } as const;
const DEFAULT_PLAN = { providerBps: 100, payerFee: 0, tofBps: 500, tteBps: 0, ...MODEL };

describe('commission (decisions "Commission")', () => {
  test('provider fee rounds half up', () => {
    assert.equal(paymentCommission(50, DEFAULT_PLAN).provider_ttc, 1, '0.5 → 1');
    assert.equal(paymentCommission(49, DEFAULT_PLAN).provider_ttc, 0, '0.49 → 0');
    assert.equal(paymentCommission(150, DEFAULT_PLAN).provider_ttc, 2, '1.5 → 2');
    assert.equal(paymentCommission(1, DEFAULT_PLAN).provider_ttc, 0);
  });

  test('taxes are inside the fees: fee × bps / (10000 + bps), half up', () => {
    assert.equal(includedTax(105, 500), 5, '105 × 500 / 10500 = 5 exactly');
    assert.equal(includedTax(21, 500), 1, '1.0 → 1');
    assert.equal(includedTax(31, 500), 1, '1.476 → 1');
    assert.equal(includedTax(32, 500), 2, '1.52 → 2');
    assert.equal(includedTax(0, 500), 0);
    assert.equal(includedTax(1000, 0), 0);
  });

  test('every part is an integer and revenue is fees minus taxes, for many amounts and plans', () => {
    const plans = [DEFAULT_PLAN, { providerBps: 275, payerFee: 150, tofBps: 500, tteBps: 180, ...MODEL }];
    for (const plan of plans) {
      for (const amount of [1, 7, 99, 100, 101, 1313, 123_457, 99_999_999, 100_000_000]) {
        const c = paymentCommission(amount, plan);
        for (const value of Object.values(c)) assert.ok(Number.isInteger(value) && value >= 0);
        assert.equal(c.payer_ttc, plan.payerFee);
        assert.equal(c.total_revenue, c.provider_ttc + c.payer_ttc - c.tof - c.tte);
      }
    }
  });

  test('the largest amount stays exact', () => {
    const c = paymentCommission(100_000_000, {
      providerBps: 9999,
      payerFee: 100_000_000,
      tofBps: 10000,
      tteBps: 10000,
      ...MODEL,
    });
    assert.equal(c.provider_ttc, 99_990_000);
    assert.equal(c.tof, 99_995_000, '199,990,000 / 2');
  });

  test('refunds give the provider fee back pro rata, rounded down, and the parts add up to the whole', () => {
    let fees = withCharge(NO_FEES, 1000, paymentCommission(1000, DEFAULT_PLAN));
    const parts = [333, 333, 334];
    const given = parts.map((amount, index) => {
      const c = refundCommission(fees, amount, index === parts.length - 1);
      fees = withRefund(fees, amount, c);
      return c;
    });
    assert.deepEqual(
      given.map((c) => c.provider_ttc),
      [3, 3, 4],
      '3.33 → 3, 6.66 → 6 (3 more), 10 (4 more)',
    );
    assert.equal(
      given.reduce((sum, c) => sum + c.provider_ttc, 0),
      10,
    );
    for (const c of given) {
      assert.equal(c.payer_ttc, 0, 'the payer fee is not returned');
      assert.equal(c.total_revenue, c.provider_ttc - c.tof - c.tte);
    }
  });
});

describe('payer phone masking (decisions "Events and deliveries")', () => {
  test('keeps +, the country code and the last 2 digits', () => {
    assert.equal(maskPhone('+22212345678'), '+222******78');
    assert.equal(maskPhone('+14155550123'), '+1********23');
    assert.equal(maskPhone('+33612345678'), '+33*******78');
    assert.equal(maskPhone('+971501234567'), '+971*******67');
  });
});
