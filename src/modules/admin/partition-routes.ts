import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { archiveMonth, ARCHIVABLE_TABLES, type ArchiveRefusal } from '../../db/partition-archive.js';
import { listMonthTables, monthText, partitionedTables, rowsInDefaultPartitions } from '../../db/partitions.js';
import { ApiError } from '../../http/errors.js';
import { write } from '../../http/idempotency/plugin.js';
import { Envelope, literalUnion } from '../../http/schemas.js';

const PartitionedTable = Type.String({ description: partitionedTables.map(({ table }) => table).join(', ') });
const ArchivableTable = literalUnion(ARCHIVABLE_TABLES);
const Month = Type.String({ pattern: '^[0-9]{4}-(0[1-9]|1[0-2])$', description: 'YYYY-MM (UTC)' });

function refusal(refused: ArchiveRefusal): ApiError {
  switch (refused.reason) {
    case 'too recent':
      return new ApiError(
        'MONTH_NOT_ARCHIVABLE',
        `Statements may be asked for any month of the past year: the latest month that may be archived is ${refused.earliest}.`,
      );
    case 'unsettled balance rows':
      return new ApiError(
        'MONTH_NOT_ARCHIVABLE',
        `${refused.rows} balance transactions of this month are not settled by a payout yet.`,
      );
    case 'refundable seller rows':
      return new ApiError(
        'MONTH_NOT_ARCHIVABLE',
        `${refused.rows} sellers' balance transactions of this month belong to payments or orders that may still be refunded.`,
      );
    case 'no such month':
      return new ApiError('NOT_FOUND', 'No attached partition holds this month (archived already, or never made).');
    case 'lock timeout':
      return new ApiError('PARTITION_BUSY');
  }
}

/** Operator routes for the monthly partitions (decision 091): what each month holds, and the archive of money months. */
export const partitionAdminRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.services;

  app.get(
    '/partitions',
    {
      schema: {
        response: {
          200: Envelope(
            Type.Object({
              months: Type.Array(
                Type.Object({
                  table: PartitionedTable,
                  name: Type.String(),
                  month: Month,
                  attached: Type.Boolean(),
                  estimatedRows: Type.Integer(),
                  bytes: Type.Integer(),
                }),
              ),
              defaultPartitions: Type.Array(Type.Object({ table: PartitionedTable, rows: Type.Integer() })),
            }),
          ),
        },
      },
    },
    async () => ({
      success: true as const,
      data: {
        months: (await listMonthTables(db)).map((month) => ({
          ...month,
          month: monthText(month.month),
          estimatedRows: Math.round(month.estimatedRows),
        })),
        defaultPartitions: await rowsInDefaultPartitions(db),
      },
    }),
  );

  app.post(
    '/partitions/archive',
    {
      schema: {
        body: Type.Object({ table: ArchivableTable, month: Month }, { additionalProperties: false }),
        response: {
          200: Envelope(
            Type.Object({
              table: ArchivableTable,
              month: Month,
              detached: Type.String(),
              rows: Type.Integer(),
              total: Type.String({ description: 'sum of amount (ledger_postings) or of net (balance_transactions)' }),
            }),
          ),
        },
      },
    },
    async (request, reply) =>
      write(request, reply, 200, async (trx) => {
        const month = new Date(`${request.body.month}-01T00:00:00Z`);
        const outcome = await archiveMonth(trx, request.body.table, month);
        if ('refused' in outcome) throw refusal(outcome.refused);
        return outcome.archived;
      }),
  );
};
