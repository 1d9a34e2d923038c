import type { MemberId } from '@baton/contracts';

/** One member as the roster knows it: the public address its peers reach it at. */
export interface RosterMember {
  id: MemberId;
  publicUrl: string;
}

/** datacenter -> its members. Authorities live in datacenters; members serve them. */
export type RosterConfig = Record<string, { members: Record<MemberId, { public: string }> }>;

/** Resolves datacenters to members and addresses. An unknown name resolves to nothing. */
export class Roster {
  private readonly byDatacenter = new Map<string, RosterMember[]>();
  private readonly datacenterOf = new Map<MemberId, string>();

  constructor(config: RosterConfig) {
    for (const [datacenter, { members }] of Object.entries(config)) {
      const list: RosterMember[] = [];
      for (const [id, { public: publicUrl }] of Object.entries(members)) {
        if (this.datacenterOf.has(id)) {
          throw new Error(`roster lists member ${id} in both ${this.datacenterOf.get(id)} and ${datacenter}: a member belongs to one datacenter`);
        }
        this.datacenterOf.set(id, datacenter);
        list.push({ id, publicUrl: publicUrl.replace(/\/+$/, '') });
      }
      this.byDatacenter.set(datacenter, list);
    }
  }

  datacenters(): string[] {
    return [...this.byDatacenter.keys()];
  }

  hasDatacenter(datacenter: string): boolean {
    return this.byDatacenter.has(datacenter);
  }

  /** The members of a datacenter; empty when the roster does not list it. */
  membersOf(datacenter: string): readonly RosterMember[] {
    return this.byDatacenter.get(datacenter) ?? [];
  }

  datacenterOfMember(member: MemberId): string | undefined {
    return this.datacenterOf.get(member);
  }

  member(member: MemberId): RosterMember | undefined {
    const datacenter = this.datacenterOf.get(member);
    return datacenter ? this.byDatacenter.get(datacenter)!.find((m) => m.id === member) : undefined;
  }

  allMembers(): RosterMember[] {
    return [...this.byDatacenter.values()].flat();
  }
}
