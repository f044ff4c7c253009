/** How the CLI shows businesses to a person (with --json it prints the API's data as it is). */

export interface BusinessListItem {
  id: string;
  name: string;
  liveApproved: boolean;
  apiEnabled: boolean;
  createdAt: string;
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
      item.liveApproved ? 'approved' : 'no',
      item.apiEnabled ? 'on' : 'off',
      // Minutes, UTC: enough to tell businesses apart, short enough for one line.
      `${item.createdAt.slice(0, 16).replace('T', ' ')} UTC`,
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
