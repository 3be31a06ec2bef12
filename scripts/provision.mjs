// Provisions Gatehouse's topics (and their DLQs) and registers every event schema with BACKWARD
// compatibility, against the cluster and registry named by the environment. Safe to run again.
import { createKafka, eventsConfigFromEnv, EventSerde, KafkaAdmin, provisionTopics, topicNames } from '@gatehouse/events';
import { createLogger } from '@gatehouse/telemetry';

const logger = createLogger('provision');
const config = eventsConfigFromEnv();
const topics = topicNames(config.topicPrefix);
const kafka = createKafka(config, 'gatehouse-provision');
const admin = await KafkaAdmin.connect(kafka);
try {
  const { created, existing } = await provisionTopics(admin, topics, config.topicSettings);
  logger.info({ created, existing: existing.length }, 'topics provisioned');
} finally {
  await admin.close();
}
const ids = await new EventSerde({ registryUrl: config.registryUrl, topics }).registerAll();
logger.info({ schemaIds: ids }, 'event schemas registered (BACKWARD)');
