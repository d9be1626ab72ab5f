import { Migration } from '@mikro-orm/migrations';

/**
 * Workflows: the graph (workflows, steps, transitions), executions with their durable timer
 * (`wake_at`: the execution is due then; claimed with FOR UPDATE SKIP LOCKED like delivery) and
 * per-step records. A timer is a column of the execution row, so it commits and is cancelled
 * together with the execution's state.
 */
export class Migration20261125000000_workflows extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE workflows (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        name text NOT NULL,
        description text,
        trigger_type text NOT NULL DEFAULT 'EVENT' CHECK (trigger_type = 'EVENT'),
        trigger_event text NOT NULL,
        enabled boolean NOT NULL DEFAULT false,
        allow_reentry boolean NOT NULL DEFAULT false,
        version integer NOT NULL DEFAULT 1,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX workflows_project_created ON workflows (project_id, created_at DESC, id DESC);
      -- Trigger lookup from the change feed: enabled workflows by event name.
      CREATE INDEX workflows_trigger ON workflows (project_id, trigger_event) WHERE enabled;

      CREATE TABLE workflow_steps (
        id uuid PRIMARY KEY,
        workflow_id uuid NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
        project_id uuid NOT NULL,
        type text NOT NULL CHECK (type IN ('SEND_EMAIL', 'DELAY', 'WAIT_FOR_EVENT', 'CONDITION', 'WEBHOOK', 'UPDATE_CONTACT', 'EXIT')),
        name text NOT NULL,
        position jsonb NOT NULL DEFAULT '{"x":0,"y":0}',
        config jsonb NOT NULL DEFAULT '{}',
        -- DELETE /templates/:id refuses (409) while a step sends the template; SET NULL lets a
        -- project's deletion cascade to both (RESTRICT and NO ACTION fail between its cascades).
        template_id uuid REFERENCES templates (id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX workflow_steps_workflow ON workflow_steps (workflow_id, created_at);
      CREATE INDEX workflow_steps_template ON workflow_steps (template_id) WHERE template_id IS NOT NULL;

      CREATE TABLE workflow_transitions (
        id uuid PRIMARY KEY,
        workflow_id uuid NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
        from_step_id uuid NOT NULL REFERENCES workflow_steps (id) ON DELETE CASCADE,
        to_step_id uuid NOT NULL REFERENCES workflow_steps (id) ON DELETE CASCADE,
        branch text CHECK (branch IN ('yes', 'no', 'event', 'timeout')),
        created_at timestamptz NOT NULL DEFAULT now()
      );
      -- One way out of a step per branch ('' is the plain transition).
      CREATE UNIQUE INDEX workflow_transitions_out ON workflow_transitions (from_step_id, COALESCE(branch, ''));
      CREATE INDEX workflow_transitions_to ON workflow_transitions (to_step_id);

      CREATE TABLE workflow_executions (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        workflow_id uuid NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
        contact_id uuid NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
        status text NOT NULL CHECK (status IN ('RUNNING', 'WAITING', 'COMPLETED', 'EXITED', 'FAILED', 'CANCELLED')),
        current_step_id uuid REFERENCES workflow_steps (id) ON DELETE SET NULL,
        -- The durable timer: due at wake_at (RUNNING: now; DELAY: its end; WAIT_FOR_EVENT: its timeout).
        wake_at timestamptz,
        wait_event text,
        waiting_since timestamptz,
        resume_branch text,
        context jsonb NOT NULL DEFAULT '{}',
        trigger_event_id uuid,
        exit_reason text,
        started_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX workflow_executions_due ON workflow_executions (wake_at) WHERE status IN ('RUNNING', 'WAITING') AND wake_at IS NOT NULL;
      -- Ids are v7 (time-ordered): lists page by id.
      CREATE INDEX workflow_executions_upcoming ON workflow_executions (project_id, wake_at) WHERE status = 'WAITING' AND wake_at IS NOT NULL;
      CREATE INDEX workflow_executions_list ON workflow_executions (workflow_id, id DESC);
      CREATE INDEX workflow_executions_contact ON workflow_executions (contact_id, workflow_id);
      CREATE INDEX workflow_executions_waiting ON workflow_executions (project_id, wait_event, contact_id) WHERE status = 'WAITING' AND wait_event IS NOT NULL;
      -- Re-entry: never two active executions of one workflow for one contact; an event starts one at most once.
      CREATE UNIQUE INDEX workflow_executions_active ON workflow_executions (workflow_id, contact_id) WHERE status IN ('RUNNING', 'WAITING');
      CREATE UNIQUE INDEX workflow_executions_trigger ON workflow_executions (workflow_id, trigger_event_id) WHERE trigger_event_id IS NOT NULL;

      CREATE TABLE workflow_step_runs (
        id uuid PRIMARY KEY,
        execution_id uuid NOT NULL REFERENCES workflow_executions (id) ON DELETE CASCADE,
        step_id uuid REFERENCES workflow_steps (id) ON DELETE SET NULL,
        step_type text NOT NULL,
        step_name text NOT NULL,
        status text NOT NULL CHECK (status IN ('RUNNING', 'WAITING', 'COMPLETED', 'SKIPPED', 'FAILED', 'CANCELLED')),
        output jsonb,
        error text,
        attempts integer NOT NULL DEFAULT 0,
        started_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz
      );
      CREATE INDEX workflow_step_runs_execution ON workflow_step_runs (execution_id, started_at, id);

      ALTER TABLE emails ADD COLUMN workflow_execution_id uuid REFERENCES workflow_executions (id) ON DELETE SET NULL;
      CREATE INDEX emails_workflow_execution ON emails (workflow_execution_id) WHERE workflow_execution_id IS NOT NULL;
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      ALTER TABLE emails DROP COLUMN workflow_execution_id;
      DROP TABLE workflow_step_runs, workflow_executions, workflow_transitions, workflow_steps, workflows;
    `);
  }
}
