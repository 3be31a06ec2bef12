export { eventsConfigFromEnv, EVENTS_ENV_DEFAULTS } from './config.js';
export type { EventsConfig, TopicSettings } from './config.js';
export { startEventConsumer } from './consumer.js';
export type { EventConsumerOptions, RunningConsumer } from './consumer.js';
export type { ConsumedRecord, EventHandler } from './event-handler.js';
export { DeadLetters, DLQ_HEADER } from './dead-letters.js';
export type { DeadLetterSink } from './dead-letters.js';
export { KeyScheduler } from './key-scheduler.js';
export { OffsetTracker } from './offset-tracker.js';
export { startParallelConsumer } from './parallel-consumer.js';
export type { ParallelConsumerOptions, ParallelConsumerStats, RunningParallelConsumer } from './parallel-consumer.js';
export type { OriginRecord } from './dead-letters.js';
export { ApprovalState } from './approval-view.js';
export type { RequestSummary } from './approval-view.js';
export { DecisionKind, ResultStatus } from './event-types.js';
export type {
  ApprovalDecision,
  ApprovalGrant,
  ApprovalRequest,
  Decider,
  Diff,
  EpochMillis,
  ExecutionOrder,
  FieldChange,
  Money,
  OperatorHandoff,
  PendingApproval,
  Person,
  Target,
  ToolCommand,
  ToolErrorEvent,
  ToolResult,
} from './event-types.js';
export { EventsError } from './events-error.js';
export type { EventsErrorCode } from './events-error.js';
export { createKafka, KafkaConnection } from './kafka-client.js';
export { provisionTopics } from './provisioning.js';
export type { ProvisionResult } from './provisioning.js';
export { awaitTopicsServed, topicOffsets } from './topic-readiness.js';
export { KafkaAdmin } from './kafka-admin.js';
export { readRanges } from './range-reader.js';
export { skipAbortedBatches } from './read-committed.js';
export type { WireBatch, WireFetchedPartition } from './read-committed.js';
export { AnswerScan, answerScanGroupPrefix } from './answer-scan.js';
export type { AnswerScanOptions, AnswerScanVerdict } from './answer-scan.js';
export type { PartitionRange, RangeReadOptions } from './range-reader.js';
export type { CommittedOffset, PartitionOffsets, TopicSpec } from './kafka-admin.js';
export { kafkaClientCodes, kafkaErrorCodes } from './kafka-errors.js';
export type { OutboundRecord, ReadRecord, RecordHeaders } from './wire-record.js';
export { EventPublisher, PARTITION_KEY_HEADER, partitionFor, producerStateLost } from './publisher.js';
export { addressOf, errorResult, okResult, pendingResult, toErrorEvent } from './results.js';
export { executionOrder } from './execution-order.js';
export type { OrderedWrite, OrderParts, OrderRun } from './execution-order.js';
export type { ResultAddress } from './results.js';
export type { KeyHash, Outgoing, PublishCondition, PublisherOptions } from './publisher.js';
export { defaultSchemasDir, loadEventSchemas } from './schema-files.js';
export type { EventSchemas } from './schema-files.js';
export { contractSubject, publishContracts } from './published-contracts.js';
export type { PublishedContract } from './published-contracts.js';
export { DecodeFailure, EventSerde } from './serde.js';
export type { Decoded, EventSerdeOptions } from './serde.js';
export { dlqTopicOf, SCHEMA_FILE_BY_ROLE, subjectOf, TOPIC_ROLES, TopicRole, topicNames } from './topics.js';
export type { EventByRole, Topics } from './topics.js';
export { HEADER_BYTES, MAGIC_BYTE, readWireHeader, writeWireFormat } from './wire-format.js';
export type { WireHeader } from './wire-format.js';
export { fromStoredOutcome, toStoredOutcome } from './stored-outcome.js';
export type { StoredOutcome } from './stored-outcome.js';
export {
  decisionSigningPayload,
  EventSigner,
  handoffSigningPayload,
  isSignedRole,
  KEY_ID_HEADER,
  orderSigningPayload,
  payloadFor,
  requestSigningPayload,
  resultSigningPayload,
  SIGNATURE_HEADER,
  SIGNED_BY,
  verifyDecision,
  verifyEvent,
  verifyHandoff,
  verifyOrder,
  verifyPayload,
  verifyRequest,
  verifyResult,
  verifySigned,
} from './event-signing.js';
export type { SignatureCheck, SignatureRefusal, SignedHeaders, SignedRole } from './event-signing.js';
export { BATCH_PROOF_HEADER, MAX_BATCH_LEAVES } from './batch-signing.js';
export { checkRecord, deadLetterUntrusted, ORDER_CLOCK_MARGIN_MS, recordSha256, untrustedReason } from './record-trust.js';
export type { RecordTrust } from './record-trust.js';
export {
  assertSignsAs,
  generateSigningKey,
  KEY_ROLES,
  KeyRole,
  keyRing,
  keyRingFromEnv,
  KEYS_VARIABLE,
  parseSigningKey,
  parseTrustedKeys,
  SigningKeyError,
} from './signing-keys.js';
export type { KeyRing, RoleKey, SigningKey, TrustedKeys } from './signing-keys.js';
export { replyGroupPrefix, startReplyReader } from './reply-reader.js';
export type { ReplyReader, ReplyReaderOptions } from './reply-reader.js';
export {
  COMMAND_PROOF_HEADER,
  COMMAND_PROVER_HEADER,
  commandProofPayload,
  frontDoorProof,
  RUN_PROOF_HEADER,
  RunKey,
  RunKeyError,
  runPublicKey,
  verifyCommandProof,
  verifyRunRequest,
  wellFormedCommand,
} from './command-proof.js';
export type { CommandProofCheck, CommandProofRefusal, CommandProver } from './command-proof.js';
export { requestProofOf, sealDecision, verifyDecisionSeal } from './decision-seal.js';
export type { DecisionSeal, SealedApproval } from './decision-seal.js';
