import { withTransaction } from './db.js';
import { ServiceError } from './errors.js';
import type { ExportFormat } from './export-jobs.js';
import { sendWrite } from './faults.js';
import { failure } from './idempotent-write.js';
import { cancelBody, idParams, exportBody } from './http-schemas.js';
import type { Services } from './services.js';
import { claimOf, logWrite, sameTarget, WRITE } from './write-routes.js';
import type { CustomersApp } from './http-context.js';

function jobNotFound(id: string): ServiceError {
  return new ServiceError('NOT_FOUND', `export job ${id} not found`, { field: 'job_id' });
}

/** Long export jobs: start (keyed, 202), poll, and truthful cancellation. */
export function registerExportRoutes(app: CustomersApp, s: Services): void {
  app.post<{ Body: { customer_id: string; format: ExportFormat } }>(
    '/exports',
    { config: WRITE, schema: { body: exportBody } },
    async (request, reply) => {
      const { customer_id: customerId, format } = request.body;
      const claim = claimOf(request, 'export', customerId);
      const outcome = await s.runWrite(claim, async (db) => {
        const customer = await s.customers.find(db, request.tenant, customerId);
        if (customer === undefined) {
          return failure(new ServiceError('NOT_FOUND', `customer ${customerId} not found`, { field: 'customer_id' }));
        }
        const job = await s.exports.create(db, request.tenant, customerId, format, claim.key);
        return { outcome: 'succeeded', httpStatus: 202, body: { job_id: job.job_id, state: job.state } };
      });
      logWrite(request, claim, outcome);
      return sendWrite(s.faults, request, reply, outcome);
    },
  );

  app.get<{ Params: { id: string } }>('/exports/:id', { schema: { params: idParams } }, async (request) => {
    const job = await s.exports.find(s.pool, request.tenant, request.params.id);
    if (job === undefined) throw jobNotFound(request.params.id);
    return job;
  });

  app.post<{ Params: { id: string }; Body: { operation_id: string } }>(
    '/exports/:id/cancel',
    { config: WRITE, schema: { params: idParams, body: cancelBody } },
    async (request, reply) => {
      sameTarget(request.params.id, request.body.operation_id, 'operation_id');
      const result = await withTransaction(s.pool, (db) => s.exports.cancel(db, request.tenant, request.params.id));
      if (result === undefined) throw jobNotFound(request.params.id);
      request.log.info({ tenant: request.tenant, job_id: result.job_id, outcome: result.outcome }, 'export cancel');
      return sendWrite(s.faults, request, reply, { outcome: 'succeeded', httpStatus: 200, body: result, replay: false });
    },
  );
}
