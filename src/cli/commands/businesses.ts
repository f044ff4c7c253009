import {
  businessDetails,
  businessTable,
  liveKeysNote,
  type BusinessListItem,
  type BusinessPage,
  type CreatedBusinessOutput,
} from '../business-output.js';
import { integer, required, type Command, type CommandGroup } from '../command-line.js';

/** A business, its API switch and its fee plan. */
const business: CommandGroup = {
  create: ({ values }) => ({
    method: 'POST',
    path: '/businesses',
    body: {
      name: required(values.name, '--name'),
      approveLive: values['approve-live'] ?? false,
      ...(values['verified-name'] !== undefined ? { verifiedName: values['verified-name'] } : {}),
      withShop: !values['no-shop'],
      // Live keys belong to approved businesses: an unapproved one gets them at approve-live.
      liveKeys: values['approve-live'] ?? false,
    },
    note: (data) => liveKeysNote(data as CreatedBusinessOutput),
  }),
  'approve-live': ({ id, values }) => ({
    method: 'POST',
    path: `/businesses/${encodeURIComponent(required(id, 'BUSINESS_ID'))}/approve-live`,
    // The name payers see in live mode: the operator's word, which a merchant's rename leaves alone.
    body: values['verified-name'] !== undefined ? { verifiedName: values['verified-name'] } : {},
  }),
  show: ({ id }) => ({
    method: 'GET',
    path: `/businesses/${encodeURIComponent(required(id, 'BUSINESS_ID'))}`,
    render: (data) => businessDetails(data as BusinessListItem),
  }),
  list: ({ values }) => {
    const query = new URLSearchParams();
    const page = integer(values.page, 'page');
    const limit = integer(values.limit, 'limit');
    if (page !== undefined) query.set('page', String(page));
    if (limit !== undefined) query.set('limit', String(limit));
    return {
      method: 'GET',
      path: `/businesses${query.size > 0 ? `?${query}` : ''}`,
      render: (data) => businessTable(data as BusinessPage),
    };
  },
};

/** Turns the API off or on, for one business or for all. */
const switchApi: Command = ({ action, values }) => ({
  method: 'POST',
  path: `/api/${action}`,
  body: values.business ? { businessId: values.business } : {},
});

const api: CommandGroup = {
  disable: switchApi,
  enable: switchApi,
};

const fees: CommandGroup = {
  set: ({ values }) => {
    const body: Record<string, unknown> = {};
    const fields = {
      providerBps: 'provider-bps',
      payerFee: 'payer-fee',
      tofBps: 'tof-bps',
      tteBps: 'tte-bps',
      marginBps: 'margin-bps',
      payoutFeeFlat: 'payout-fee-flat',
      payoutFeeBps: 'payout-fee-bps',
    } as const;
    for (const [field, option] of Object.entries(fields)) {
      const value = integer(values[option], option);
      if (value !== undefined) body[field] = value;
    }
    if (values['revenue-model'] !== undefined) body.revenueModel = values['revenue-model'];
    return {
      method: 'PUT',
      path: `/businesses/${encodeURIComponent(required(values.business, '--business'))}/fees`,
      body,
    };
  },
};

export const businessCommands = { business, api, fees };
