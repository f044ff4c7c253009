/** How the CLI shows businesses to a person (with --json it prints the API's data as it is). */

export interface BusinessListItem {
  id: string;
  name: string;
  /** The name payers see in live mode, as the operator verified it (absent from servers before migration 040). */
  verifiedName?: string | null;
  liveApproved: boolean;
  apiEnabled: boolean;
  /** When it asked for live access from its dashboard (absent from servers before migration 031). */
  liveRequestedAt?: string | null;
  createdAt: string;
}

/** Minutes, UTC: enough to tell businesses apart, short enough for one line. */
const minutes = (iso: string) => `${iso.slice(0, 16).replace('T', ' ')} UTC`;

/** Where the business stands on live mode: approved, asked from its dashboard (waiting), or no. */
function liveState(item: BusinessListItem): string {
  if (item.liveApproved) return 'approved';
  return item.liveRequestedAt ? `requested ${minutes(item.liveRequestedAt)}` : 'no';
}

export interface BusinessPage {
  items: BusinessListItem[];
  page: number;
  limit: number;
  total: number;
  hasMore: boolean;
}

export interface CreatedBusinessOutput {
  business: { id: string; liveApproved: boolean };
  keys: { environment: string }[];
}

/** Columns padded to their widest cell; names are the merchant's own, so they are cut, not wrapped. */
export function businessTable(page: BusinessPage): string {
  if (page.total === 0) return 'No businesses yet: `business create --name NAME` makes one.';
  const name = (text: string) => (text.length > 40 ? `${text.slice(0, 39)}…` : text);
  const rows = [
    ['ID', 'NAME', 'LIVE', 'API', 'CREATED'],
    ...page.items.map((item) => [
      item.id,
      name(item.name),
      liveState(item),
      item.apiEnabled ? 'on' : 'off',
      minutes(item.createdAt),
    ]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const lines = rows.map((row) =>
    row
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd(),
  );
  const first = (page.page - 1) * page.limit + 1;
  const last = first + page.items.length - 1;
  const more = page.hasMore ? `; --page ${page.page + 1} for the next ${page.limit}` : '';
  const position = page.items.length > 0 ? `${first}-${last} of ${page.total}` : `none on page ${page.page}`;
  return [...lines, '', `${position}, newest first${more}`].join('\n');
}

/** After `business create`: where the live keys are, since they are not in this answer. */
export function liveKeysNote(created: CreatedBusinessOutput): string | undefined {
  if (created.keys.some((key) => key.environment === 'live')) return undefined;
  return (
    'No live keys yet: the business is not approved for live. ' +
    `\`business approve-live ${created.business.id}\` approves it and prints its live keys, once.`
  );
}

/** `business show`: one business, a line per field, and what to run when it waits for approval. */
export function businessDetails(item: BusinessListItem): string {
  const lines = [
    ['ID', item.id],
    ['NAME', item.name],
    ...(item.verifiedName ? [['VERIFIED', item.verifiedName]] : []),
    ['LIVE', liveState(item)],
    ['API', item.apiEnabled ? 'on' : 'off'],
    ['CREATED', minutes(item.createdAt)],
  ].map(([label, value]) => `${label!.padEnd(10)}${value}`);
  if (!item.liveApproved && item.liveRequestedAt)
    lines.push('', `Waiting for approval: \`business approve-live ${item.id}\` approves it.`);
  return lines.join('\n');
}
