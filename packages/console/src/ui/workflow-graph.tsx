import type { TransitionBranch, WorkflowStep, WorkflowTransition } from '@pigeon/sdk';
import {
  Controls,
  type Edge,
  Handle,
  MarkerType,
  type Node,
  type NodeProps,
  Position,
  ReactFlow,
  useNodesInitialized,
  useReactFlow,
  useStore,
} from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useEffect, useRef } from 'react';
import { BRANCHES, branchLabel, layout, type Problems, typeLabel } from './workflow-model';

/**
 * A workflow drawn with React Flow, top to bottom: the trigger, then each step (its type, name and
 * what it does) laid out from the transitions (the API's stored positions are not used: a graph
 * built through the API alone has none worth drawing). Loaded only by the workflow pages, with
 * React Flow's stylesheet. In the editor each step is a button that selects it, and dragging from
 * a step's handle (yes/no under a CONDITION) to another step connects them; for an execution the
 * steps it passed, the one it is at and the transitions it followed are marked.
 */

export interface ExecutionMarks {
  /** Steps the execution ran, by step id, with the run's status. */
  passed: Map<string, string>;
  current: string | null;
  /** `from>to` step pairs the execution went along, in order. */
  followed: Set<string>;
}

type StepData = {
  step: WorkflowStep;
  summary: string;
  selected: boolean;
  problems: string[];
  markText?: string;
  onSelect?: (stepId: string) => void;
  connectable: boolean;
};
type TriggerData = { eventName: string };
type StepNodeType = Node<StepData, 'step'>;
type TriggerNodeType = Node<TriggerData, 'trigger'>;

const handleId = (branch: TransitionBranch | null) => branch ?? 'next';

function StepNode({ data }: NodeProps<StepNodeType>) {
  const { step } = data;
  const body = (
    <>
      <span className="wf-node-type">{typeLabel(step.type)}</span>
      <strong className="wf-node-name">{step.name}</strong>
      <span className="wf-node-summary">{data.summary}</span>
      {data.markText ? <span className="wf-node-mark">{data.markText}</span> : null}
      {data.problems.map((p) => (
        <span key={p} className="wf-node-problem">
          ⚠ {p}
        </span>
      ))}
    </>
  );
  return (
    <>
      <Handle type="target" position={Position.Top} isConnectable={data.connectable} />
      {data.onSelect ? (
        <button
          type="button"
          className="wf-node-body nodrag"
          aria-pressed={data.selected}
          onClick={() => data.onSelect?.(step.id)}
        >
          {body}
        </button>
      ) : (
        <div className="wf-node-body">{body}</div>
      )}
      {BRANCHES[step.type].map((branch) => (
        <Handle
          key={handleId(branch)}
          id={handleId(branch)}
          type="source"
          position={Position.Bottom}
          isConnectable={data.connectable}
          // Placed by the stylesheet: yes and event on the left, no and timeout on the right.
          className={branch ? `wf-handle-${branch}` : undefined}
          title={branch ? `Drag to connect the “${branch}” branch` : 'Drag to connect the next step'}
        />
      ))}
    </>
  );
}

function TriggerNode({ data }: NodeProps<TriggerNodeType>) {
  return (
    <>
      <div className="wf-node-body">
        <span className="wf-node-type">Trigger</span>
        <strong className="wf-node-name">When “{data.eventName}” is tracked</strong>
      </div>
      <Handle id="next" type="source" position={Position.Bottom} isConnectable={false} />
    </>
  );
}

const nodeTypes = { step: StepNode, trigger: TriggerNode };
const FIT = { padding: 0.15, maxZoom: 1 };
const TRIGGER = 'trigger';
const ROW = 170;

/**
 * Fits the graph to its frame again once its nodes are measured, when steps or transitions come
 * or go, and when the frame's size changes (a phone turned).
 */
function Fit({ shape }: { shape: string }) {
  const { fitView } = useReactFlow();
  const width = useStore((s) => s.width);
  const height = useStore((s) => s.height);
  const measured = useNodesInitialized();
  useEffect(() => {
    if (measured && width > 0 && height > 0 && shape) fitView(FIT);
  }, [measured, width, height, shape, fitView]);
  return null;
}

export function WorkflowGraph({
  steps,
  transitions,
  eventName,
  summary,
  selected,
  onSelect,
  onConnect,
  problems,
  marks,
  label,
}: {
  steps: WorkflowStep[];
  transitions: WorkflowTransition[];
  eventName: string;
  summary: (step: WorkflowStep) => string;
  selected?: string | null;
  onSelect?: (stepId: string) => void;
  onConnect?: (from: string, to: string, branch: TransitionBranch | null) => void;
  problems?: Problems;
  marks?: ExecutionMarks;
  label: string;
}) {
  const measured = useRef(new Map<string, { width: number; height: number }>());
  const at = layout(steps, transitions, { width: 240, height: ROW });
  const targets = new Set(transitions.map((t) => t.toStepId));
  const roots = steps.filter((s) => !targets.has(s.id));
  const name = (id: string) => steps.find((s) => s.id === id)?.name ?? id;
  const nodes: Array<StepNodeType | TriggerNodeType> = [
    {
      id: TRIGGER,
      type: 'trigger',
      position: { x: 0, y: 0 },
      data: { eventName },
      ariaRole: 'group',
      ariaLabel: 'Trigger',
      className: marks ? 'wf-node wf-trigger passed' : 'wf-node wf-trigger',
    },
    ...steps.map((step): StepNodeType => {
      const status = marks?.passed.get(step.id);
      const mark =
        marks?.current === step.id
          ? 'current'
          : status === 'FAILED'
            ? 'failed'
            : status !== undefined
              ? 'passed'
              : undefined;
      const stepProblems = problems?.byStep.get(step.id) ?? [];
      return {
        id: step.id,
        type: 'step',
        position: at.get(step.id) ?? { x: 0, y: 0 },
        ariaRole: 'group',
        ariaLabel: `${typeLabel(step.type)} step`,
        // React Flow lets clicks through nodes that are neither selectable nor draggable: the step's button takes them.
        style: onSelect ? { pointerEvents: 'all' } : undefined,
        className: ['wf-node', mark, stepProblems.length ? 'has-problem' : '', selected === step.id ? 'selected' : '']
          .filter(Boolean)
          .join(' '),
        data: {
          step,
          summary: summary(step),
          selected: selected === step.id,
          problems: stepProblems,
          markText:
            mark === 'current'
              ? `Here now${status ? ` (${status})` : ''}`
              : status
                ? status === 'COMPLETED'
                  ? 'Passed'
                  : status
                : undefined,
          onSelect,
          connectable: Boolean(onConnect),
        },
      };
    }),
  ];
  const edges: Edge[] = transitions.map((t) => {
    const followed = marks?.followed.has(`${t.fromStepId}>${t.toStepId}`) ?? false;
    return {
      id: t.id,
      source: t.fromStepId,
      sourceHandle: handleId(t.branch),
      target: t.toStepId,
      type: 'smoothstep',
      label: t.branch ? branchLabel(t.branch) : undefined,
      className: followed ? 'followed' : undefined,
      markerEnd: { type: MarkerType.ArrowClosed },
      ariaLabel: `From ${name(t.fromStepId)} to ${name(t.toStepId)}${t.branch ? ` (${branchLabel(t.branch)})` : ''}${followed ? ', followed' : ''}`,
    };
  });
  const [entry] = roots;
  if (roots.length === 1 && entry) {
    // Centre the trigger over the first step.
    const first = at.get(entry.id);
    if (first && nodes[0]) nodes[0].position = { x: first.x, y: first.y - ROW };
    edges.push({
      id: 'trigger-edge',
      source: TRIGGER,
      sourceHandle: 'next',
      target: entry.id,
      type: 'smoothstep',
      className: marks && marks.passed.size > 0 ? 'followed' : undefined,
      markerEnd: { type: MarkerType.ArrowClosed },
      ariaLabel: `The trigger starts at ${entry.name}`,
    });
  }
  return (
    // Tall enough for the rows at a readable zoom (the stylesheet bounds it).
    <div
      className="wf-canvas"
      style={{ height: (Math.max(0, ...[...at.values()].map((p) => p.y)) / ROW + 1) * 150 + 80 }}
    >
      <ReactFlow
        aria-label={label}
        nodes={nodes.map((n) => ({ ...n, measured: measured.current.get(n.id) }))}
        edges={edges}
        nodeTypes={nodeTypes}
        fitView
        fitViewOptions={FIT}
        minZoom={0.25}
        nodesDraggable={false}
        nodesConnectable={Boolean(onConnect)}
        nodesFocusable={false}
        edgesFocusable={false}
        elementsSelectable={false}
        // The page scrolls over the graph; zoom with the buttons or a pinch.
        zoomOnScroll={false}
        preventScrolling={false}
        zoomOnDoubleClick={false}
        colorMode="system"
        // The nodes are built afresh on each render: their measured sizes are kept here and handed
        // back, so that React Flow need not measure them again (edges wait for measured handles).
        onNodesChange={(changes) => {
          for (const c of changes)
            if (c.type === 'dimensions' && c.dimensions) measured.current.set(c.id, c.dimensions);
        }}
        onConnect={(c) => {
          if (!onConnect || !c.target || c.source === TRIGGER) return;
          const branch = c.sourceHandle && c.sourceHandle !== 'next' ? (c.sourceHandle as TransitionBranch) : null;
          onConnect(c.source, c.target, branch);
        }}
      >
        <Controls showInteractive={false} />
        <Fit shape={`${steps.map((st) => st.id).join()}|${transitions.map((t) => t.id).join()}`} />
      </ReactFlow>
    </div>
  );
}
