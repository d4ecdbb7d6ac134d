"""The data dispatcher: the scheduler, the matcher and the other dispatchers behind one interface."""
