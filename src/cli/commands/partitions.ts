import { required, UsageError, type CommandGroup } from '../command-line.js';

interface MonthTable {
  table: string;
  name: string;
  month: string;
  attached: boolean;
  estimatedRows: number;
  bytes: number;
}

interface ArchivedMonth {
  table: string;
  month: string;
  detached: string;
  rows: number;
  total: string;
}

const megabytes = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`;

/** The monthly partitions (decision 091): what each month holds, and the archive of an old money month. */
const partitions: CommandGroup = {
  list: () => ({
    method: 'GET',
    path: '/partitions',
    render: (data) => {
      const { months, defaultPartitions } = data as {
        months: MonthTable[];
        defaultPartitions: { table: string; rows: number }[];
      };
      const lines = months.map(
        (month) =>
          `${month.name.padEnd(36)} ${month.attached ? 'attached' : 'DETACHED'}  ~${String(month.estimatedRows).padStart(10)} rows  ${megabytes(month.bytes).padStart(10)}`,
      );
      for (const { table, rows } of defaultPartitions)
        lines.push(
          `${`${table}_default`.padEnd(36)} ${rows} rows${rows > 0 ? ' (a month made late: the next partitions-ahead run moves them)' : ''}`,
        );
      return lines.join('\n');
    },
  }),
  archive: ({ id, values }) => {
    const table = required(id, 'the table (ledger_postings or balance_transactions)');
    const month = required(values.month, '--month YYYY-MM');
    if (!/^\d{4}-\d{2}$/.test(month)) throw new UsageError('--month must be YYYY-MM');
    return {
      method: 'POST',
      path: '/partitions/archive',
      body: { table, month },
      render: (data) => {
        const archived = data as ArchivedMonth;
        return [
          `${archived.table} ${archived.month}: detached as table ${archived.detached}, ${archived.rows} rows, total ${archived.total}.`,
          `Now: pg_dump -t ${archived.detached} -Fc -f ${archived.detached}.dump; restore it elsewhere and check`,
          `"SELECT count(*), sum(${archived.table === 'ledger_postings' ? 'amount' : 'net'}) FROM ${archived.detached}" gives ${archived.rows} and ${archived.total};`,
          `then DROP TABLE ${archived.detached}.`,
        ].join('\n');
      },
    };
  },
};

export const partitionCommands = { partitions };
