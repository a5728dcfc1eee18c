/// A bulk action's `--parent` (migration 12 of both stores; see
/// docs/schema.md): `actions.parent_id`, the job whose children the action
/// selected, kept with the rest of its selection so that an interrupted
/// action is resumed over the same jobs.
extension Schema {
    static let version12 = """
        ALTER TABLE actions ADD COLUMN parent_id INTEGER;
        """
}
