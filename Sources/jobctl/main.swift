import JobEngine
