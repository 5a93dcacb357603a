from mirix.cli import main

main()
