/** One member of a classic consumer group, and what the group answers it. */

export interface JoinResult {
  errorCode: number;
  generationId: number;
  protocolType: string | null;
  protocolName: string | null;
  leader: string;
  memberId: string;
  /** Every member's metadata for the chosen protocol: for the leader only (it runs the assignor). */
  members: Array<{ memberId: string; groupInstanceId: string | null; metadata: Buffer }>;
}

export interface SyncResult {
  errorCode: number;
  protocolType: string | null;
  protocolName: string | null;
  assignment: Buffer;
}

export interface MemberProtocol {
  readonly name: string;
  readonly metadata: Buffer;
}

/** What a JoinGroup request says about its member. */
export interface JoinRequest {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  protocolType: string;
  protocols: MemberProtocol[];
}

export class Member {
  readonly memberId: string;
  // Set by update(), which the constructor calls.
  groupInstanceId!: string | null;
  clientId!: string;
  clientHost!: string;
  sessionTimeoutMs!: number;
  rebalanceTimeoutMs!: number;
  protocols!: MemberProtocol[];
  /** The leader's assignment for this member in the current generation (empty until SyncGroup). */
  assignment: Buffer = Buffer.alloc(0);
  /** A JoinGroup waiting for the rebalance to complete. */
  awaitingJoin: ((r: JoinResult) => void) | null = null;
  /** A SyncGroup waiting for the leader's assignments. */
  awaitingSync: ((r: SyncResult) => void) | null = null;
  sessionTimer: NodeJS.Timeout | null = null;

  constructor(memberId: string, req: JoinRequest) {
    this.memberId = memberId;
    this.update(req);
  }

  /** Whether a rejoin carries the same protocols and metadata (no rebalance needed for it). */
  sameProtocols(protocols: ReadonlyArray<MemberProtocol>): boolean {
    return protocols.length === this.protocols.length && protocols.every((p, i) => p.name === this.protocols[i]!.name && p.metadata.equals(this.protocols[i]!.metadata));
  }

  update(req: JoinRequest): void {
    this.groupInstanceId = req.groupInstanceId;
    this.clientId = req.clientId;
    this.clientHost = req.clientHost;
    this.sessionTimeoutMs = req.sessionTimeoutMs;
    this.rebalanceTimeoutMs = req.rebalanceTimeoutMs;
    // Decoded buffers are slices of the request frame: copy what outlives the request.
    this.protocols = req.protocols.map((p) => ({ name: p.name, metadata: Buffer.from(p.metadata) }));
  }

  metadataFor(protocol: string): Buffer {
    return this.protocols.find((p) => p.name === protocol)?.metadata ?? Buffer.alloc(0);
  }
}
