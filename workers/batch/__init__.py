"""Many jobs over documents: ``suture batch`` through the producer API, and ``suture eval`` inline."""
